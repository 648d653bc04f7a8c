"""Adagrad, Keras 3's update rule."""
from minikeras import initializers
from minikeras.ops.math import cast, sqrt, square
from minikeras.optimizers.base import Optimizer


class Adagrad(Optimizer):
    """Per-parameter learning rates scaled by the sum of all past squared gradients.

    Per variable (``accumulator`` starts at ``initial_accumulator_value``)::

        accumulator += g^2
        var -= lr * g / sqrt(accumulator + epsilon)

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      initial_accumulator_value: starting value of the accumulators (0.1).
      epsilon: added inside the square root (1e-7).
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        initializer = initializers.Constant(self.initial_accumulator_value)
        self._accumulators = self.add_optimizer_variables(var_list, "accumulator", initializer=initializer)

    def update_step(self, gradient, variable, learning_rate):
        lr = cast(learning_rate, variable.dtype)
        gradient = cast(gradient, variable.dtype)
        accumulator = self._accumulators[self._get_variable_index(variable)]
        self.assign_add(accumulator, square(gradient))
        self.assign_sub(variable, lr * gradient / sqrt(accumulator + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}

"""Adadelta, Keras 3's update rule."""
from minikeras.ops.math import cast, sqrt, square
from minikeras.optimizers.base import Optimizer


class Adadelta(Optimizer):
    """Adapts the step to a running average of past updates, so ``learning_rate`` is only a
    scale factor (the paper uses 1.0; Keras's default is 0.001).

    Per variable::

        accumulated_grad = rho * accumulated_grad + (1 - rho) * g^2
        delta = -sqrt(accumulated_delta_var + epsilon) * g / sqrt(accumulated_grad + epsilon)
        accumulated_delta_var = rho * accumulated_delta_var + (1 - rho) * delta^2
        var += lr * delta

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      rho: decay rate of both running averages (0.95).
      epsilon: added inside the square roots (1e-7).
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._accumulated_grads, self._accumulated_delta_vars = self.add_optimizer_variables(
            var_list, ["accumulated_grad", "accumulated_delta_var"])

    def update_step(self, grad, variable, learning_rate):
        lr = cast(learning_rate, variable.dtype)
        grad = cast(grad, variable.dtype)
        rho = self.rho
        index = self._get_variable_index(variable)
        accumulated_grad = self._accumulated_grads[index]
        accumulated_delta_var = self._accumulated_delta_vars[index]
        self.assign(accumulated_grad, rho * accumulated_grad + (1 - rho) * square(grad))
        delta_var = -(sqrt(accumulated_delta_var + self.epsilon) * grad / sqrt(accumulated_grad + self.epsilon))
        self.assign(accumulated_delta_var, rho * accumulated_delta_var + (1 - rho) * square(delta_var))
        self.assign_add(variable, lr * delta_var)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}

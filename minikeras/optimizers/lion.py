"""Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"), Keras 3's update rule."""
from minikeras.ops.math import cast, sign
from minikeras.optimizers.base import Optimizer


class Lion(Optimizer):
    """The sign of an interpolation of the momentum and the gradient, per variable::

        var -= lr * sign(beta_1 * m + (1 - beta_1) * g)
        m = beta_2 * m + (1 - beta_2) * g

    Args:
      learning_rate: float, schedule or callable (default 0.001; Lion wants 3-10x smaller rates
        than Adam).
      beta_1: the interpolation's weight on the momentum, in (0, 1] (0.9).
      beta_2: decay rate of the momentum (0.99).
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer degenerates to "
                             f"SignSGD. Received: beta_1={beta_1}.")
        self.beta_1 = beta_1
        self.beta_2 = beta_2

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._momentums = self.add_optimizer_variables(var_list, "momentum")

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = cast(learning_rate, dtype)
        gradient = cast(gradient, dtype)
        m = self._momentums[self._get_variable_index(variable)]
        self.assign_sub(variable, lr * sign(m * self.beta_1 + gradient * (1.0 - self.beta_1)))
        self.assign(m, m * self.beta_2 + gradient * (1.0 - self.beta_2))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2}

"""Adamax (Adam with the infinity norm), Keras 3's update rule."""
from minikeras.ops.math import abs as abs_, cast, maximum, pow
from minikeras.optimizers.base import Optimizer


class Adamax(Optimizer):
    """A variant of Adam that scales by an exponentially weighted infinity norm.

    At step ``t`` (1-based), per variable::

        m += (g - m) * (1 - beta_1)
        u = max(beta_2 * u, |g|)
        var -= lr * m / ((1 - beta_1^t) * (u + epsilon))

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      beta_1: decay rate of the first moment (0.9).
      beta_2: decay rate of the infinity norm (0.999).
      epsilon: added to ``u`` (1e-7).
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._m, self._u = self.add_optimizer_variables(var_list, ["momentum", "norm"])

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = cast(learning_rate, dtype)
        gradient = cast(gradient, dtype)
        local_step = cast(self.iterations + 1, dtype)
        beta_1_power = pow(cast(self.beta_1, dtype), local_step)
        index = self._get_variable_index(variable)
        m, u = self._m[index], self._u[index]
        self.assign_add(m, (gradient - m) * (1 - self.beta_1))
        self.assign(u, maximum(self.beta_2 * u, abs_(gradient)))
        self.assign_sub(variable, lr * m / ((1 - beta_1_power) * (u + self.epsilon)))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}

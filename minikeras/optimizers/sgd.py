"""Stochastic gradient descent with optional (Nesterov) momentum, Keras 3's update rule."""
from minikeras.ops.math import cast
from minikeras.optimizers.base import Optimizer


class SGD(Optimizer):
    """Gradient descent (with momentum).

    Without momentum: ``w -= learning_rate * g``. With momentum:
    ``velocity = momentum * velocity - learning_rate * g; w += velocity``; with
    ``nesterov=True``: ``w += momentum * velocity - learning_rate * g``.

    Args:
      learning_rate: float, schedule or callable (default 0.01).
      momentum: float in [0, 1] (default 0.0).
      nesterov: whether to use Nesterov momentum.
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be a float between [0, 1]. Received: momentum={momentum!r}")
        self.momentum = float(momentum)
        self.nesterov = nesterov

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        self.momentums = []
        if self.momentum != 0:
            self.momentums = self.add_optimizer_variables(variables, "momentum")

    def update_step(self, gradient, variable, learning_rate):
        learning_rate = cast(learning_rate, variable.dtype)
        gradient = cast(gradient, variable.dtype)
        if self.momentum == 0:
            self.assign_sub(variable, gradient * learning_rate)
            return
        m = self.momentums[self._get_variable_index(variable)]
        self.assign(m, m * self.momentum - gradient * learning_rate)
        if self.nesterov:
            self.assign_add(variable, m * self.momentum - gradient * learning_rate)
        else:
            self.assign_add(variable, m)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}

"""RMSprop (plain or centered, with optional momentum), Keras 3's update rule."""
from minikeras.ops.math import cast, sqrt, square
from minikeras.optimizers.base import Optimizer


class RMSprop(Optimizer):
    """Divides the gradient by a running root mean square of recent gradients.

    Per variable::

        velocity = rho * velocity + (1 - rho) * g^2
        denominator = velocity + epsilon                       # plain
        average_grad = rho * average_grad + (1 - rho) * g      # centered:
        denominator = velocity - average_grad^2 + epsilon      #   variance estimate
        increment = lr * g / sqrt(denominator)
        momentum = momentum_coef * momentum + increment; var -= momentum   # if momentum > 0
        var -= increment                                                     # otherwise

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      rho: discount of the running averages (0.9).
      momentum: momentum coefficient (0.0).
      epsilon: added inside the square root (1e-7).
      centered: normalise by the estimated variance instead of the second moment.
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._velocities = self.add_optimizer_variables(var_list, "velocity")
        self._momentums = self.add_optimizer_variables(var_list, "momentum") if self.momentum > 0 else []
        self._average_gradients = (self.add_optimizer_variables(var_list, "average_gradient") if self.centered
                                   else [])

    def update_step(self, gradient, variable, learning_rate):
        lr = cast(learning_rate, variable.dtype)
        gradient = cast(gradient, variable.dtype)
        index = self._get_variable_index(variable)
        velocity = self._velocities[index]
        rho = self.rho
        self.assign(velocity, rho * velocity + (1 - rho) * square(gradient))
        if self.centered:
            average_grad = self._average_gradients[index]
            self.assign(average_grad, rho * average_grad + (1 - rho) * gradient)
            denominator = velocity - square(average_grad) + self.epsilon
        else:
            denominator = velocity + self.epsilon
        increment = lr * gradient / sqrt(denominator)
        if self.momentum > 0:
            momentum = self._momentums[index]
            self.assign(momentum, self.momentum * momentum + increment)
            self.assign_sub(variable, momentum)
        else:
            self.assign_sub(variable, increment)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                "centered": self.centered}

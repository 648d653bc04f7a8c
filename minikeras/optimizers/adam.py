"""Adam (and AMSGrad), Keras 3's update rule."""
from minikeras.ops.fused import fused_adam_step
from minikeras.ops.math import cast, maximum, pow, sqrt, square
from minikeras.optimizers.base import Optimizer


class Adam(Optimizer):
    """Adam: adaptive estimates of the first and second moments of the gradient.

    At step ``t`` (1-based), per variable::

        alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
        m += (g - m) * (1 - beta_1)
        v += (g^2 - v) * (1 - beta_2)
        var -= alpha * m / (sqrt(v) + epsilon)

    With ``amsgrad=True``, ``v_hat = max(v_hat, v)`` replaces ``v`` in the last line.

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      beta_1, beta_2: decay rates of the moment estimates (0.9, 0.999).
      epsilon: added to ``sqrt(v)`` ("epsilon hat" of the paper; default 1e-7).
      amsgrad: use the AMSGrad variant.
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = amsgrad

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])
        if self.amsgrad:
            self._velocity_hats = self.add_optimizer_variables(var_list, "velocity_hat")

    def _apply_weight_decay(self, variables, lr):
        """Nothing here: ``update_step`` decays each variable just before its update, in the
        native kernel's pass where that runs (the same values as decaying them all first)."""

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        decay = self._weight_decay_of(variable)
        lr = cast(learning_rate, dtype)
        gradient = cast(gradient, dtype)
        local_step = cast(self.iterations + 1, dtype)
        beta_1_power = pow(cast(self.beta_1, dtype), local_step)
        beta_2_power = pow(cast(self.beta_2, dtype), local_step)
        index = self._get_variable_index(variable)
        m = self._momentums[index]
        v = self._velocities[index]
        alpha = lr * sqrt(1 - beta_2_power) / (1 - beta_1_power)
        fused = None if self.amsgrad else fused_adam_step(variable, m, v, gradient, alpha, self.beta_1, self.beta_2,
                                                          self.epsilon, weight_decay=decay, learning_rate=lr)
        if fused is not None:
            new_variable, new_m, new_v = fused
            self.assign(m, new_m)
            self.assign(v, new_v)
            self.assign(variable, new_variable)
            return
        self._decay(variable, learning_rate)
        self.assign_add(m, (gradient - m) * (1 - self.beta_1))
        self.assign_add(v, (square(gradient) - v) * (1 - self.beta_2))
        if self.amsgrad:
            v_hat = self._velocity_hats[index]
            self.assign(v_hat, maximum(v_hat, v))
            v = v_hat
        self.assign_sub(variable, (m * alpha) / (sqrt(v) + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                "amsgrad": self.amsgrad}

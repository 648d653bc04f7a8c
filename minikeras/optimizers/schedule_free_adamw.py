"""Schedule-free AdamW (Defazio et al. 2024, "The Road Less Scheduled"), Keras 3's update rule."""
from minikeras.ops.math import cast, minimum, pow, sqrt, square
from minikeras.optimizers.base import Optimizer


class ScheduleFreeAdamW(Optimizer):
    """AdamW without a learning-rate schedule: the variable ``y`` is an interpolation between the
    plain iterate ``z`` (kept in the ``momentum`` slot, started at the variable) and its running
    average ``x``. At step ``t``::

        lr_t = lr * min(t / warmup_steps, 1) (with warm-up)
        v += (g^2 - v) * (1 - beta_2)
        z -= lr_t * g / (sqrt(v / (1 - beta_2^t)) + epsilon)
        x = (1 - 1/t) * (y - (1 - beta_1) * z_old) / beta_1 + (1/t) * z
        y = (1 - beta_1) * z + beta_1 * x

    Args:
      learning_rate: float, schedule or callable (default 0.0025).
      beta_1: the interpolation's weight on the average (0.9).
      beta_2: decay rate of the second moment (0.999).
      epsilon: added to the denominator (1e-8).
      warmup_steps: steps of linear warm-up of the rate (0: none).
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8, warmup_steps=0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.warmup_steps = warmup_steps

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])
        for momentum, variable in zip(self._momentums, var_list):  # z starts at the variable, as Keras's
            momentum.assign(variable)

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = cast(learning_rate, dtype)
        gradient = cast(gradient, dtype)
        local_step = cast(self.iterations + 1, dtype)
        beta_1, beta_2 = cast(self.beta_1, dtype), cast(self.beta_2, dtype)
        if self.warmup_steps > 0:
            lr = lr * minimum(local_step / cast(self.warmup_steps, dtype), 1.0)
        index = self._get_variable_index(variable)
        momentum, velocity = self._momentums[index], self._velocities[index]
        momentum_old = momentum.value()
        self.assign_add(velocity, (square(gradient) - velocity) * (1 - beta_2))
        denom = sqrt(velocity / (1 - pow(beta_2, local_step))) + cast(self.epsilon, dtype)
        self.assign_sub(momentum, lr * gradient / denom)
        weight = 1.0 / local_step
        x_old = (variable - (1 - beta_1) * momentum_old) / beta_1
        x_new = (1 - weight) * x_old + weight * momentum
        self.assign(variable, (1 - beta_1) * momentum + beta_1 * x_new)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                "warmup_steps": self.warmup_steps}

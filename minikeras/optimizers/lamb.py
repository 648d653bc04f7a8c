"""LAMB (You et al. 2019, "Large Batch Optimization for Deep Learning"), Keras 3's update rule."""
from minikeras.ops.math import cast, greater, pow, sqrt, square, where
from minikeras.ops.reduce import reduce_sum
from minikeras.optimizers.base import Optimizer


class Lamb(Optimizer):
    """Adam's step scaled per variable by a trust ratio ``||var|| / ||step||``. At step ``t``::

        m += (g - m) * (1 - beta_1)
        v += (g^2 - v) * (1 - beta_2)
        step = (m / (1 - beta_1^t)) / (sqrt(v / (1 - beta_2^t)) + epsilon)
        ratio = ||var|| / ||step|| where both norms are positive, else 1
        var -= ratio * lr * step

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      beta_1, beta_2: decay rates of the first and second moments (0.9, 0.999).
      epsilon: added to the denominator (1e-7).
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
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = cast(learning_rate, dtype)
        gradient = cast(gradient, dtype)
        local_step = cast(self.iterations + 1, dtype)
        beta_1_power = pow(cast(self.beta_1, dtype), local_step)
        beta_2_power = pow(cast(self.beta_2, dtype), local_step)
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        self.assign_add(m, (gradient - m) * (1 - self.beta_1))
        self.assign_add(v, (square(gradient) - v) * (1 - self.beta_2))
        step = (m / (1.0 - beta_1_power)) / (sqrt(v / (1.0 - beta_2_power)) + self.epsilon)
        w_norm = sqrt(reduce_sum(square(variable)))
        g_norm = sqrt(reduce_sum(square(step)))
        ratio = where(greater(w_norm, 0.0), where(greater(g_norm, 0.0), w_norm / g_norm, 1.0), 1.0)
        self.assign_sub(variable, ratio * lr * step)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}

"""Nadam (Adam with Nesterov momentum), Keras 3's update rule."""
from minikeras.backend import floatx
from minikeras.ops.math import cast, pow, sqrt, square
from minikeras.optimizers.base import Optimizer


class Nadam(Optimizer):
    """Adam with Nesterov momentum and Dozat's momentum schedule
    ``u_t = beta_1 * (1 - 0.5 * 0.96^t)``.

    At step ``t`` (1-based), with ``u_product`` (a scalar slot, the running product of the
    ``u_t``, updated once per step before the variables)::

        u_product *= u_t
        m += (g - m) * (1 - beta_1)
        v += (g^2 - v) * (1 - beta_2)
        m_hat = u_{t+1} * m / (1 - u_product * u_{t+1}) + (1 - u_t) * g / (1 - u_product)
        v_hat = v / (1 - beta_2^t)
        var -= lr * m_hat / (sqrt(v_hat) + epsilon)

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      beta_1, beta_2: decay rates of the moment estimates (0.9, 0.999).
      epsilon: added to ``sqrt(v_hat)`` (1e-7).
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
        var_list = list(var_list)
        dtype = var_list[0].dtype if var_list else floatx()
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])
        # Keras names this slot plainly "variable"; it comes last in `variables`
        self._u_product = self.add_variable((), initializer="ones", dtype=dtype, name="variable")

    def _backend_update_step(self, grads, variables, learning_rate):
        dtype = self._u_product.dtype
        u_t = self.beta_1 * (1.0 - 0.5 * pow(cast(0.96, dtype), cast(self.iterations + 1, dtype)))
        self.assign(self._u_product, self._u_product * u_t)
        super()._backend_update_step(grads, variables, learning_rate)

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = cast(learning_rate, dtype)
        gradient = cast(gradient, dtype)
        local_step = cast(self.iterations + 1, dtype)
        next_step = cast(self.iterations + 2, dtype)
        decay = cast(0.96, dtype)
        beta_1 = cast(self.beta_1, dtype)
        beta_2 = cast(self.beta_2, dtype)
        u_t = beta_1 * (1.0 - 0.5 * pow(decay, local_step))
        u_t_1 = beta_1 * (1.0 - 0.5 * pow(decay, next_step))
        u_product_t = cast(self._u_product, dtype)
        u_product_t_1 = u_product_t * u_t_1
        beta_2_power = pow(beta_2, local_step)
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        self.assign_add(m, (gradient - m) * (1 - beta_1))
        self.assign_add(v, (square(gradient) - v) * (1 - beta_2))
        m_hat = u_t_1 * m / (1 - u_product_t_1) + (1 - u_t) * gradient / (1 - u_product_t)
        v_hat = v / (1 - beta_2_power)
        self.assign_sub(variable, m_hat * lr / (sqrt(v_hat) + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}

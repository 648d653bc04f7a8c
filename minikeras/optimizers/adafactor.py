"""Adafactor (Shazeer & Stern 2018, "Adaptive Learning Rates with Sublinear Memory Cost"), Keras
3's update rule: the second moment of a matrix is kept factored, as one row and one column
average, instead of one value per element."""
from minikeras.ops.array import expand_dims
from minikeras.ops.math import cast, maximum, minimum, pow, sqrt, square
from minikeras.ops.reduce import reduce_mean
from minikeras.optimizers.base import Optimizer


def _rms(x):
    return sqrt(reduce_mean(square(x)))


class Adafactor(Optimizer):
    """At step ``t``, per variable (the last two axes of a variable of rank >= 2 factored)::

        lr_t = min(lr, 1 / sqrt(t)) if relative_step and lr is a number
        alpha = max(epsilon_2, rms(var)) * min(lr_t, 1 / sqrt(t))
        beta_2 = 1 - t^beta_2_decay;  g2 = g^2 + epsilon_1
        rank >= 2:  r = beta_2 r + (1 - beta_2) mean(g2, -1);  c = beta_2 c + (1 - beta_2) mean(g2, -2)
                    v = (r / mean(r, -1))[..., None] * c[..., None, :]
        rank < 2:   v = beta_2 v + (1 - beta_2) g2
        u = g / sqrt(v);  var -= alpha * u / max(1, rms(u) / clip_threshold)

    Args:
      learning_rate: float, schedule or callable (default 0.001).
      beta_2_decay: the exponent of the second moment's decay (-0.8).
      epsilon_1: added to the squared gradient (1e-30).
      epsilon_2: the smallest scale of a step (1e-3).
      clip_threshold: the largest rms of a step before scaling (1.0).
      relative_step: cap a constant learning rate at ``1 / sqrt(t)`` (True).
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3, clip_threshold=1.0,
                 relative_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_2_decay = beta_2_decay
        self.epsilon_1 = epsilon_1
        self.epsilon_2 = epsilon_2
        self.clip_threshold = clip_threshold
        self.relative_step = relative_step

    def build(self, var_list):
        """Keras's slots and their order: per variable its row and column averages (named as
        the variable; two unused scalars for a variable of rank < 2, as Keras 3 makes them),
        then its ``velocity``."""
        if self.built:
            return
        super().build(var_list)
        self._r, self._c, self._v = [], [], []
        for var in var_list:
            if len(var.shape) < 2:
                self._r.append(self.add_variable((), dtype=var.dtype, name=var.name))
                self._c.append(self.add_variable((), dtype=var.dtype, name=var.name))
            else:
                self._r.append(self.add_variable(var.shape[:-1], dtype=var.dtype, name=var.name))
                self._c.append(self.add_variable(var.shape[:-2] + (var.shape[-1],), dtype=var.dtype, name=var.name))
            self._v.append(self.add_variable_from_reference(var, "velocity"))

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = cast(learning_rate, dtype)
        gradient = cast(gradient, dtype)
        local_step = cast(self.iterations + 1, dtype)
        if self.relative_step and not self.learning_rate_is_scheduled():
            lr = minimum(lr, 1 / sqrt(local_step))
        index = self._get_variable_index(variable)
        r, c, v = self._r[index], self._c[index], self._v[index]
        rho_t = minimum(lr, 1 / sqrt(local_step))
        alpha_t = maximum(cast(self.epsilon_2, dtype), _rms(variable)) * rho_t
        regulated_grad_square = square(gradient) + self.epsilon_1
        beta_2_t = 1 - pow(local_step, self.beta_2_decay)
        if len(variable.shape) >= 2:
            self.assign(r, beta_2_t * r + (1 - beta_2_t) * reduce_mean(regulated_grad_square, axis=-1))
            self.assign(c, beta_2_t * c + (1 - beta_2_t) * reduce_mean(regulated_grad_square, axis=-2))
            self.assign(v, expand_dims(r / reduce_mean(r, axis=-1, keepdims=True), -1) * expand_dims(c, -2))
        else:
            self.assign(v, beta_2_t * v + (1 - beta_2_t) * regulated_grad_square)
        u_t = gradient / sqrt(v)
        self.assign_sub(variable, alpha_t * (u_t / maximum(1.0, _rms(u_t) / self.clip_threshold)))

    def get_config(self):
        return {**super().get_config(), "beta_2_decay": self.beta_2_decay, "epsilon_1": self.epsilon_1,
                "epsilon_2": self.epsilon_2, "clip_threshold": self.clip_threshold,
                "relative_step": self.relative_step}

"""Muon (Jordan et al. 2024; Moonlight's scaling, Liu et al. 2025), Keras 3's update rule: 2-D
weights take a momentum step orthogonalized by Newton-Schulz iterations; every other variable
(biases, embeddings, weights of other ranks, layers in ``exclude_layers``) takes AdamW's step."""
import re

from minikeras.ops.array import transpose
from minikeras.ops.linalg import matmul
from minikeras.ops.math import cast, pow, sqrt, square
from minikeras.ops.norm import norm
from minikeras.optimizers.base import Optimizer


def _swap_last_axes(x):
    perm = list(range(x.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return transpose(x, perm)


class Muon(Optimizer):
    """Muon for 2-D weights, AdamW for the rest. For a 2-D weight at each step::

        m += g + m * (momentum - 1)
        u = g + momentum * m   (nesterov; else u = m)
        var -= lr * NewtonSchulz5(u) * sqrt(max(rows, cols)) * rms_rate

    and decoupled weight decay ``weight_decay`` (``adam_weight_decay`` for the AdamW variables),
    applied before the step with the learning rate.

    Args:
      learning_rate: float, schedule or callable (0.001); the AdamW variables use it times
        ``adam_lr_ratio``.
      adam_beta_1, adam_beta_2, epsilon: AdamW's moments and fuzz (0.9, 0.999, 1e-7).
      adam_weight_decay, weight_decay: the decays (0.004 each).
      exclude_layers: regular expressions; variables whose path matches one take AdamW's step.
      exclude_embeddings: variables with 'embedding' in their path take AdamW's step (True).
      muon_a, muon_b, muon_c: the Newton-Schulz polynomial (3.4445, -4.7750, 2.0315).
      adam_lr_ratio: 1.
      momentum: Muon's momentum (0.95); nesterov: use the Nesterov form (True).
      ns_steps: Newton-Schulz iterations (5).
      rms_rate: the update's RMS scaling (0.2; None: no scaling).
      Other arguments as ``mk.optimizers.Optimizer``.
    """

    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999, adam_weight_decay=0.004,
                 epsilon=1e-7, weight_decay=0.004, exclude_layers=None, exclude_embeddings=True, muon_a=3.4445,
                 muon_b=-4.7750, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95, ns_steps=5, nesterov=True,
                 rms_rate=0.2, **kwargs):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, **kwargs)
        self.adam_beta_1, self.adam_beta_2, self.epsilon = adam_beta_1, adam_beta_2, epsilon
        self.muon_a, self.muon_b, self.muon_c = muon_a, muon_b, muon_c
        self.adam_lr_ratio, self.momentum, self.ns_steps = adam_lr_ratio, momentum, ns_steps
        self.nesterov, self.exclude_embeddings = nesterov, exclude_embeddings
        self.exclude_layers = list(exclude_layers or [])
        self.adam_weight_decay, self.rms_rate = adam_weight_decay, rms_rate

    def _uses_adamw(self, variable):
        if len(variable.shape) != 2:
            return True
        path = str(getattr(variable, "path", variable.name))
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def build(self, var_list):
        """Keras's slots and order: each variable's ``momentum``, then ``velocity`` for the AdamW ones."""
        if self.built:
            return
        super().build(var_list)
        self._momentums, self._velocities = [], []
        for variable in var_list:
            self._momentums.append(self.add_variable_from_reference(variable, "momentum"))
            self._velocities.append(self.add_variable_from_reference(variable, "velocity")
                                    if self._uses_adamw(variable) else None)

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        if v is not None:
            self._adamw_step(gradient, variable, learning_rate * self.adam_lr_ratio, m, v)
        else:
            self._muon_step(gradient, variable, learning_rate, m)

    def _muon_step(self, gradient, variable, lr, m):
        self.assign_add(m, gradient + m * (self.momentum - 1))
        update = self._newton_schulz(gradient + self.momentum * m if self.nesterov else m.value())
        if self.rms_rate is not None:
            update = update * (max(update.shape[0], update.shape[1]) ** 0.5) * self.rms_rate
        self.assign_sub(variable, lr * update)

    def _adamw_step(self, gradient, variable, learning_rate, m, v):
        dtype = variable.dtype
        lr = cast(learning_rate, dtype)
        gradient = cast(gradient, dtype)
        local_step = cast(self.iterations + 1, dtype)
        alpha = lr * sqrt(1 - pow(cast(self.adam_beta_2, dtype), local_step)) / (
            1 - pow(cast(self.adam_beta_1, dtype), local_step))
        self.assign_add(m, (gradient - m) * (1 - self.adam_beta_1))
        self.assign_add(v, (square(gradient) - v) * (1 - self.adam_beta_2))
        self.assign_sub(variable, m * alpha / (sqrt(v) + self.epsilon))

    def _newton_schulz(self, x):
        """Keras's quintic Newton-Schulz iteration towards the nearest semi-orthogonal matrix."""
        tall = x.shape[-2] > x.shape[-1]
        if tall:
            x = _swap_last_axes(x)
        x = x / (norm(x, axis=(-2, -1), keepdims=True) + 1e-7)
        for _ in range(self.ns_steps):
            a = matmul(x, _swap_last_axes(x))
            x = self.muon_a * x + matmul(self.muon_b * a + self.muon_c * matmul(a, a), x)
        return _swap_last_axes(x) if tall else x

    def _apply_weight_decay(self, variables, lr):
        """Each variable's decay, ``weight_decay`` or ``adam_weight_decay``, with the learning rate."""
        for variable in variables:
            if not self._use_weight_decay(variable):
                continue
            decay = self.adam_weight_decay if self._uses_adamw(variable) else self.weight_decay
            if decay is None:
                continue
            variable.assign(variable - variable * cast(decay, variable.dtype) * cast(lr, variable.dtype))

    def get_config(self):
        return {**super().get_config(), "adam_beta_1": self.adam_beta_1, "adam_beta_2": self.adam_beta_2,
                "epsilon": self.epsilon, "exclude_layers": self.exclude_layers, "muon_a": self.muon_a,
                "muon_b": self.muon_b, "muon_c": self.muon_c, "adam_lr_ratio": self.adam_lr_ratio,
                "momentum": self.momentum, "ns_steps": self.ns_steps, "nesterov": self.nesterov,
                "exclude_embeddings": self.exclude_embeddings, "adam_weight_decay": self.adam_weight_decay,
                "rms_rate": self.rms_rate}

"""What Keras 3's base optimizer does around each update rule: gradient clipping, weight
decay (with its exclusions) and the moving average of the weights (``use_ema``).

``GradientTransforms`` is a base of ``Optimizer``; it reads the Optimizer's settings
(``clipnorm``, ``global_clipnorm``, ``clipvalue``, ``weight_decay``, ``ema_momentum``,
``iterations``) and its moving-average slots.
"""
import re

from minikeras.ops.clip import clip_by_norm, clip_by_value, global_norm
from minikeras.ops.math import cast, minimum, not_equal


class GradientTransforms:
    """Clipping, weight decay and moving averages, as Keras 3's ``BaseOptimizer`` applies them."""

    def _clip_gradients(self, grads):
        if self.clipnorm and self.clipnorm > 0:
            return [clip_by_norm(g, float(self.clipnorm)) for g in grads]
        if self.global_clipnorm and self.global_clipnorm > 0:
            norm = global_norm(grads)
            clip = float(self.global_clipnorm)
            scale = clip * minimum(1.0 / norm, 1.0 / clip) + (norm - norm)  # + (n - n): NaN/inf norms poison all
            return [g * cast(scale, g.dtype) for g in grads]
        if self.clipvalue and self.clipvalue > 0:
            v = float(self.clipvalue)
            return [clip_by_value(g, -v, v) for g in grads]
        return grads

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Leaves these variables, and those whose name matches one of the regular expressions
        ``var_names`` (``re.search``, e.g. ``['bias']``), undecayed."""
        pattern = re.compile("|".join(set(var_names))) if var_names else None
        self._exclude_from_weight_decay = ({id(v) for v in var_list or ()}, pattern)
        self._update_functions.clear()

    def _use_weight_decay(self, variable):
        excluded_ids, pattern = self._exclude_from_weight_decay
        if id(variable) in excluded_ids:
            return False
        return pattern is None or pattern.search(variable.name) is None

    def _apply_weight_decay(self, variables, lr):
        for variable in variables:
            self._decay(variable, lr)

    def _weight_decay_of(self, variable):
        """The weight decay this variable gets, or None (no ``weight_decay``, or excluded)."""
        return self.weight_decay if self.weight_decay is not None and self._use_weight_decay(variable) else None

    def _decay(self, variable, lr):
        """``variable -= variable * weight_decay * lr`` where the variable is decayed."""
        decay = self._weight_decay_of(variable)
        if decay is not None:
            variable.assign(variable - variable * cast(decay, variable.dtype) * cast(lr, variable.dtype))

    # -- moving average of the variables (use_ema) ----------------------------------------------
    def _update_model_variables_moving_average(self, trainable_variables):
        for variable, average in zip(trainable_variables, self._model_variables_moving_average):
            momentum = cast(not_equal(self.iterations, 0), variable.dtype) * self.ema_momentum
            average.assign(momentum * average + (1 - momentum) * variable)

    def _overwrite_model_variables_with_average_value(self, trainable_variables):
        trainable_variables = list(trainable_variables)
        if len(trainable_variables) != len(self._model_variables_moving_average):
            raise ValueError(f"The length of model variables ({len(trainable_variables)}) to override does not match "
                             "the length of model variables stored in the optimizer "
                             f"({len(self._model_variables_moving_average)}). Please check if the optimizer was "
                             "called on your model.")
        for variable, average in zip(trainable_variables, self._model_variables_moving_average):
            variable.assign(average)

    def moving_averages(self):
        """``[(variable, its moving average), ...]`` for the variables the optimizer was built
        with (``use_ema``; empty before ``build``). ``callbacks.SwapEMAWeights`` swaps them."""
        if not self.use_ema:
            raise ValueError(f"SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. Received: "
                             f"use_ema={self.use_ema}")
        return list(zip(self._trainable_variables, self._model_variables_moving_average))

    def finalize_variable_values(self, var_list):
        """Ends training: with ``use_ema``, copies the moving averages into ``var_list`` (the
        variables the optimizer was built with, in that order). Keras's ``fit`` calls it last."""
        if self.use_ema:
            self._overwrite_model_variables_with_average_value(var_list)

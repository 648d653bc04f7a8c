"""``LossScaleOptimizer``: dynamic loss scaling around another optimizer, as Keras 3.

float16 gradients underflow: the loss is multiplied by a large scale before differentiating
(``scale_loss``) and the gradients divided by it before the inner optimizer sees them. A step
whose gradients hold an inf or a NaN is skipped and halves the scale; ``dynamic_growth_steps``
finite steps in a row double it.
"""
import numbers

import jax.numpy as jnp

from minikeras.ops.control import cond
from minikeras.ops.math import equal, is_finite, logical_and
from minikeras.ops.reduce import reduce_all
from minikeras.optimizers.base import Optimizer

_BASE_DEFAULTS = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None, "clipvalue": None,
                  "use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
                  "loss_scale_factor": None, "gradient_accumulation_steps": None}


class LossScaleOptimizer(Optimizer):
    """An optimizer that scales the loss dynamically (``mk.mixed_precision.LossScaleOptimizer``).

    Args:
      inner_optimizer: the ``mk.optimizers.Optimizer`` that applies the unscaled gradients.
      initial_scale: the first loss scale (default ``2**15``).
      dynamic_growth_steps: after this many steps with finite gradients, the scale doubles.

    In a custom loop (TF's spelling)::

        with mk.GradientTape() as tape:
            loss = loss_fn(y, model(x))
            scaled_loss = opt.get_scaled_loss(loss)        # or opt.scale_loss(loss)
        grads = opt.get_unscaled_gradients(tape.gradient(scaled_loss, model.trainable_variables))
        opt.inner_optimizer.apply_gradients(...)           # or, unscaling itself:
        opt.apply(tape.gradient(scaled_loss, model.trainable_variables), model.trainable_variables)

    Raises:
      TypeError: when ``inner_optimizer`` is not an Optimizer.
      ValueError: for ``dynamic=False`` or a base optimizer argument (set it on the inner one).
    """

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None, **kwargs):
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"LossScaleOptimizer expects an mk.optimizers.Optimizer to wrap (such as "
                            f"mk.optimizers.Adam()), received inner_optimizer={inner_optimizer!r} (of type "
                            f"{type(inner_optimizer).__name__})")
        if isinstance(inner_optimizer, LossScaleOptimizer):
            raise TypeError(f"LossScaleOptimizer cannot wrap another LossScaleOptimizer ({inner_optimizer.name!r}): "
                            "its gradients would be unscaled twice")
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                             "`loss_scale_factor` directly on the `inner_optimizer`.")
        for key, default in _BASE_DEFAULTS.items():
            if key in kwargs and kwargs.pop(key) != default:
                raise ValueError(f"LossScaleOptimizer does not support `{key}`. Instead, set `{key}` on the "
                                 "`inner_optimizer`.")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}`.")
        if isinstance(initial_scale, bool) or not isinstance(initial_scale, numbers.Real) or not initial_scale > 0:
            raise ValueError(f"LossScaleOptimizer: `initial_scale` must be a positive number. Received: "
                             f"initial_scale={initial_scale!r}")
        if isinstance(dynamic_growth_steps, bool) or not isinstance(dynamic_growth_steps, numbers.Integral) \
                or dynamic_growth_steps < 1:
            raise ValueError(f"LossScaleOptimizer: `dynamic_growth_steps` must be a positive integer. Received: "
                             f"dynamic_growth_steps={dynamic_growth_steps!r}")
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self.inner_optimizer.loss_scale_factor = None  # the inner one must not scale a second time
        self._unscaled_by_caller = []  # get_unscaled_gradients' results, until the next apply
        self._unscale = True
        self._functions_by_mode = {True: {}, False: {}}

    def build(self, var_list):
        """Creates ``step_counter`` and ``dynamic_scale``, then builds the inner optimizer."""
        self.step_counter = self.add_variable((), initializer="zeros", dtype=jnp.int32, name="step_counter")
        initial = self.initial_scale
        self.dynamic_scale = self.add_variable((), initializer=lambda shape, dtype=None: jnp.full(shape, initial,
                                                                                               dtype),
                                               dtype=jnp.float32, name="dynamic_scale")
        self.inner_optimizer.build(var_list)
        super().build(var_list)

    @property
    def variables(self):
        """Its own (``iterations``, ``learning_rate``, ``step_counter``, ``dynamic_scale``), then the
        inner optimizer's, in Keras 3's order."""
        return list(self._variables) + self.inner_optimizer.variables

    @property
    def dynamic(self):
        """Always True: the scale changes with the gradients (TF's attribute)."""
        return True

    @property
    def loss_scale(self):
        """The current loss scale (TF's attribute): ``dynamic_scale`` once built."""
        return self.dynamic_scale if self.built else self.initial_scale

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if "inner_optimizer" not in vars(self):  # the base class's own 0.0, set by its __init__
            Optimizer.learning_rate.fset(self, value)
        else:
            self.inner_optimizer.learning_rate = value
            for functions in self._functions_by_mode.values():
                functions.clear()  # they read the inner learning rate as it was when traced

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    def scale_loss(self, loss):
        """``loss * scale``: differentiate this, and ``apply`` unscales the gradients."""
        return loss * (self.dynamic_scale.value() if self.built else self.initial_scale)

    get_scaled_loss = scale_loss  # TF's name

    def get_unscaled_gradients(self, grads):
        """``grads / scale`` (None stays None): TF's name, for a loop that applies them itself."""
        scale = self.dynamic_scale.value() if self.built else self.initial_scale
        unscaled = [None if g is None else g / scale for g in grads]
        self._unscaled_by_caller = [g for g in unscaled if g is not None]
        return unscaled

    def apply(self, grads, trainable_variables=None):
        """Applies scaled gradients (those of ``scale_loss``'s loss): unscaled here, skipped when
        one is not finite. Gradients that ``get_unscaled_gradients`` returned (TF's custom-loop
        spelling) are applied as they are, with the same check."""
        grads = list(grads)
        given = self._unscaled_by_caller
        self._unscaled_by_caller = []
        self._unscale = not (given and all(g is None or any(g is u for u in given) for g in grads))
        super().apply(grads, trainable_variables)

    def update_function(self, variables):
        saved = self._update_functions  # one cache per mode: unscaling here or not is traced in
        self._update_functions = self._functions_by_mode[self._unscale]
        try:
            return super().update_function(variables)
        finally:
            self._update_functions = saved

    def _apply_update(self, grads, variables, learning_rate=None):
        finite = reduce_all(is_finite(grads[0]))
        for g in grads[1:]:
            finite = logical_and(finite, reduce_all(is_finite(g)))

        unscale = self._unscale

        def apply_finite():
            scale = self.dynamic_scale.value()
            self.inner_optimizer._apply_update([g / scale for g in grads] if unscale else grads, variables)

            def grow():
                self.step_counter.assign(0)
                self.dynamic_scale.assign(self.dynamic_scale * 2.0)
                return ()

            def count():
                self.step_counter.assign_add(1)
                return ()
            cond(equal(self.step_counter, self.dynamic_growth_steps - 1), grow, count)
            return ()

        def skip():
            self.step_counter.assign(0)
            self.dynamic_scale.assign(self.dynamic_scale * 0.5)
            return ()
        cond(finite, apply_finite, skip)

    def moving_averages(self):
        """The inner optimizer's ``moving_averages()``."""
        return self.inner_optimizer.moving_averages()

    def finalize_variable_values(self, var_list):
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self):
        from minikeras.optimizers import serialize  # the package's serializer: its __init__ imports this module
        return {"name": self.name, "inner_optimizer": serialize(self.inner_optimizer),
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from minikeras.optimizers import deserialize  # as get_config
        config = dict(config)
        inner = deserialize(config.pop("inner_optimizer"), custom_objects)
        return cls(inner, **config)

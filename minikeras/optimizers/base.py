"""The Optimizer base class: bookkeeping, validation and compilation of updates (clipping,
weight decay and the moving average are in ``transforms.GradientTransforms``, a base of it).

Subclasses create their slots in ``build(var_list)`` and implement one per-variable rule,
``update_step(gradient, variable, learning_rate)``, with minikeras ops, as in Keras 3.

Eager ``apply_gradients`` runs the whole update (clipping, weight decay, every variable's rule,
gradient accumulation, the moving average of the weights, the ``iterations`` increment) as ONE
compiled ``mk.function`` call, cached per list of variables. What depends on the step count
(accumulate or update, overwrite with the average or not) is a select (``mk.cond``), not a
Python branch, so one program serves every step.
Inside a user's ``mk.function`` the same Python code is simply traced into that program, and
slots created on the first trace become ordinary lifted Variables.
"""
import numbers
import warnings
import weakref

import jax.numpy as jnp
import numpy as np

from minikeras import _context, initializers
from minikeras.backend import floatx
from minikeras.module import compact_snake_case
from minikeras.ops.control import cond
from minikeras.ops.math import equal, floordiv, floormod, where, zeros_like_
from minikeras.optimizers import schedules as schedules_module
from minikeras.optimizers.transforms import GradientTransforms
from minikeras.optimizers.validation import GradientDTypeError, check_variables, gradient_array  # noqa: F401
from minikeras.programs.function import Function
from minikeras.tape import GradientTape
from minikeras.tensor import Tensor, Variable, to_array

# slot id -> (weak slot, weak reference variable): which variable each slot made by
# ``add_variable_from_reference`` belongs to (a distribution places a slot like its variable)
_slot_references = {}


def slot_reference(variable):
    """The Variable that ``variable`` is an optimizer slot of (``add_variable_from_reference``'s
    ``reference_variable``), or None when it is not such a slot (or that Variable is gone)."""
    entry = _slot_references.get(id(variable))
    if entry is None or entry[0]() is not variable:
        return None
    return entry[1]()


def _python_float(value, what):
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.ndarray, np.generic, Tensor, Variable)):
        raise ValueError(f"Argument `{what}` should be a float, a LearningRateSchedule or a callable. "
                         f"Received: {what}={value!r}")
    return float(np.asarray(value))


class Optimizer(GradientTransforms):
    """Base class of optimizers (``mk.optimizers.Optimizer``), Keras 3's API.

    Args:
      learning_rate: a float (kept in a non-trainable Variable, so it can change without
        recompiling), a ``LearningRateSchedule`` evaluated at ``iterations``, or a
        zero-argument callable.
      weight_decay: if set, each update first does ``var -= var * weight_decay * lr`` (decoupled
        weight decay), except for variables named in ``exclude_from_weight_decay``.
      clipnorm: clip each gradient to this L2 norm.
      clipvalue: clip each gradient elementwise to [-clipvalue, clipvalue].
      global_clipnorm: scale all gradients so their global L2 norm is at most this.
      use_ema: keep an exponential moving average of the variables (slots ``<var>_average``):
        ``average = m * average + (1 - m) * var`` after each step, with ``m = ema_momentum``
        (0 on the first step, so the average starts at the variable). ``finalize_variable_values``
        copies the averages into the variables.
      ema_momentum: ``m`` above, in [0, 1] (default 0.99).
      ema_overwrite_frequency: with ``use_ema``, every this many steps the variables are
        overwritten with their averages (None: only by ``finalize_variable_values``).
      loss_scale_factor: gradients are divided by it (for a loss multiplied by it).
      gradient_accumulation_steps: an int >= 2: gradients are summed into slots
        (``<var>_gradient_accumulator``) and the variables are updated every this many calls,
        with the mean gradient. ``iterations`` then counts updates (calls // steps), while a
        learning-rate schedule sees the number of calls.
      name: used in the names and paths of the optimizer's variables.
    """

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if "lr" in kwargs:
            warnings.warn("The `lr` argument is deprecated, use `learning_rate` instead.", DeprecationWarning,
                          stacklevel=3)
            learning_rate = kwargs.pop("lr")
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.", stacklevel=3)
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        if gradient_accumulation_steps and (isinstance(gradient_accumulation_steps, bool) or not isinstance(
                gradient_accumulation_steps, numbers.Integral) or gradient_accumulation_steps < 2):
            raise ValueError("`gradient_accumulation_steps` must be an integer >= 2. Received: "
                             f"gradient_accumulation_steps={gradient_accumulation_steps}")
        if use_ema:
            if ema_momentum > 1 or ema_momentum < 0:
                raise ValueError(f"`ema_momentum` must be in the range [0, 1]. Received: ema_momentum={ema_momentum}")
            frequency = ema_overwrite_frequency
            if frequency and (not isinstance(frequency, int) or frequency < 1):
                raise ValueError("`ema_overwrite_frequency` must be an integer >= 1 or None. Received: "
                                 f"ema_overwrite_frequency={ema_overwrite_frequency}")
        for key, value in (("clipnorm", clipnorm), ("clipvalue", clipvalue), ("global_clipnorm", global_clipnorm)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)
                                      or not value > 0):
                raise ValueError(f"{type(self).__name__}: `{key}` must be a positive number or None (a gradient "
                                 f"clipped to a negative or zero bound is no gradient). Received: {key}={value!r}")
        if sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(f"Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
                             f"clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}")
        self.name = name or compact_snake_case(self.__class__.__name__)
        self.weight_decay = weight_decay
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm
        self.use_ema = use_ema
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.built = False
        self._variables = []
        self._trainable_variables = []
        self._trainable_variables_indices = {}
        self._update_functions = {}
        self._checked = (None, None)
        self._exclude_from_weight_decay = (set(), None)  # ids, and a regex searched in variable names
        self._model_variables_moving_average = []  # use_ema: one per variable, made by build
        self._accumulated_gradients = []  # gradient_accumulation_steps: likewise
        self._iterations = self._new_variable(lambda: jnp.zeros((), jnp.int32), "iteration", jnp.int32)
        self._learning_rate = None
        self.learning_rate = learning_rate

    # -- variables ------------------------------------------------------------------------------
    def _new_variable(self, initial_value, name, dtype):
        variable = Variable(initial_value, trainable=False, name=name, dtype=dtype)
        variable.path = f"{self.name}/{name}"
        self._variables.append(variable)
        return variable

    @property
    def variables(self):
        """``iterations``, the learning rate (if stored in a Variable), then the slots in creation order."""
        return list(self._variables)

    @property
    def iterations(self):
        """The number of update steps applied so far: a non-trainable int32 Variable; with
        ``gradient_accumulation_steps``, a Tensor ``calls // gradient_accumulation_steps``."""
        if self.gradient_accumulation_steps:
            return floordiv(self._iterations, self.gradient_accumulation_steps)
        return self._iterations

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="mean", name=None):
        """Creates a non-trainable optimizer Variable (tracked in ``variables``)."""
        init = initializers.get(initializer)
        dtype = dtype or floatx()
        shape = tuple(int(n) for n in shape)
        return self._new_variable(lambda: to_array(init(shape, dtype=dtype), dtype), name or "variable", dtype)

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        """A slot shaped like ``reference_variable``, named ``<its path with _>_<name>``,
        e.g. ``dense_kernel_momentum`` with path ``adam/dense_kernel_momentum``."""
        prefix = getattr(reference_variable, "path", None) or reference_variable.name
        full_name = str(prefix).replace("/", "_").replace(":", "_") + "_" + (name or "var")
        slot = self.add_variable(reference_variable.shape, initializer=initializer, dtype=reference_variable.dtype,
                                 name=full_name)
        _slot_references[id(slot)] = (weakref.ref(slot), weakref.ref(reference_variable))
        weakref.finalize(slot, _slot_references.pop, id(slot), None)
        return slot

    def add_optimizer_variables(self, trainable_variables, name, initializer="zeros"):
        """One slot per variable (a list); with a list of names, a tuple of such lists, created
        interleaved as Keras does (``v0_momentum, v0_velocity, v1_momentum, ...``), which fixes
        the order of ``variables`` in checkpoints. ``initializer`` may be one per name."""
        names = [name] if isinstance(name, str) else list(name)
        inits = list(initializer) if isinstance(initializer, (list, tuple)) else [initializer] * len(names)
        if len(names) != len(inits):
            raise ValueError(f"The number of provided names must match the number of provided initializers.  "
                             f"Received name='{name}', initializer='{initializer}'")
        slots = tuple([] for _ in names)
        for variable in trainable_variables:
            for i, (slot_name, init) in enumerate(zip(names, inits)):
                slots[i].append(self.add_variable_from_reference(variable, slot_name, init))
        return slots[0] if isinstance(name, str) else slots

    def build(self, var_list):
        """Records the variables this optimizer updates and creates the moving averages
        (``use_ema``) and gradient accumulators; subclasses then create their slots."""
        var_list = list(var_list)
        if self.use_ema:
            self._model_variables_moving_average = self.add_optimizer_variables(var_list, "average")
        if self.gradient_accumulation_steps:
            self._accumulated_gradients = self.add_optimizer_variables(var_list, "gradient_accumulator")
        self._trainable_variables = var_list
        self._trainable_variables_indices = {id(v): i for i, v in enumerate(var_list)}
        self.built = True

    def _get_variable_index(self, variable):
        return self._trainable_variables_indices[id(variable)]

    def _check_variables_are_known(self, variables):
        for v in variables:
            if id(v) not in self._trainable_variables_indices:
                raise ValueError(
                    f"Unknown variable: '{v.path}' (shape {v.shape}). This optimizer can only be called for the "
                    f"variables it was originally built with ({len(self._trainable_variables)} variables). Build it "
                    "with the full list first (optimizer.build(model.trainable_variables)), or use a new optimizer "
                    "instance for a new set of variables.")

    def assign(self, variable, value):
        variable.assign(value)

    def assign_add(self, variable, value):
        variable.assign_add(value)

    def assign_sub(self, variable, value):
        variable.assign_sub(value)

    def get_weights(self):
        return [v.numpy() for v in self._variables]

    def set_weights(self, weights):
        if not self.built:
            raise ValueError("You are calling `set_weights()` on an optimizer that has not yet been built. Call "
                             "`optimizer.build(trainable_variables)` first.")
        if len(weights) != len(self._variables):
            raise ValueError(f"Optimizer '{self.name}' has {len(self._variables)} variables, received "
                             f"{len(weights)} weights")
        for variable, weight in zip(self._variables, weights):
            if tuple(np.shape(weight)) != variable.shape:
                raise ValueError(f"Optimizer variable '{variable.path}' has shape {variable.shape} not compatible "
                                 f"with provided weight shape {tuple(np.shape(weight))}.")
            variable.assign(weight)

    # -- learning rate ----------------------------------------------------------------------------
    @property
    def learning_rate(self):
        """The learning rate: its Variable, or a schedule's value at ``iterations`` (a Tensor).
        Assign a float to change it, or a schedule to replace it."""
        if isinstance(self._learning_rate, schedules_module.LearningRateSchedule):
            return self._learning_rate(self._iterations)
        if callable(self._learning_rate) and not isinstance(self._learning_rate, Variable):
            return self._learning_rate()
        return self._learning_rate

    def learning_rate_is_scheduled(self):
        """Whether the learning rate is a schedule or a callable (rather than a value)."""
        return callable(self._learning_rate) and not isinstance(self._learning_rate, Variable)

    @learning_rate.setter
    def learning_rate(self, value):
        previous = self._learning_rate
        if isinstance(value, schedules_module.LearningRateSchedule) or (
                callable(value) and not isinstance(value, (Variable, Tensor))):
            self._learning_rate = value
        elif isinstance(previous, Variable):
            previous.assign(_python_float(value, "learning_rate"))
            return
        elif isinstance(previous, schedules_module.LearningRateSchedule):
            raise TypeError("This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` "
                            "constructor argument, hence its learning rate is not settable. If you need the learning "
                            "rate to be settable, you should instantiate the optimizer with a float `learning_rate` "
                            "argument.")
        else:
            lr = _python_float(value, "learning_rate")
            self._learning_rate = self._new_variable(lambda: jnp.asarray(lr, floatx()), "learning_rate", floatx())
        if isinstance(previous, Variable) and previous is not self._learning_rate:
            self._variables = [v for v in self._variables if v is not previous]
        self._update_functions.clear()

    lr = learning_rate  # tf.keras 2's alias

    def _learning_rate_tensor(self):
        lr = self.learning_rate
        return lr.value() if isinstance(lr, Variable) else lr if isinstance(lr, Tensor) else Tensor(to_array(lr))

    def scale_loss(self, loss):
        """``loss * loss_scale_factor`` (the loss to differentiate; ``apply`` divides the gradients
        by the factor), or ``loss`` without one. ``fit`` differentiates this, as Keras 3."""
        return loss if self.loss_scale_factor is None else loss * float(self.loss_scale_factor)

    # -- applying gradients -----------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars, name=None, skip_gradients_aggregation=False, **kwargs):
        """Applies one update step from ``(gradient, variable)`` pairs (any iterable, e.g. ``zip``).

        ``None`` gradients are skipped with a warning naming their variables; an all-``None``
        list is an error. Returns ``iterations``.
        """
        pairs = list(grads_and_vars)
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"apply_gradients expects (gradient, variable) pairs, e.g. "
                                f"zip(grads, model.trainable_variables); element #{i} is {type(pair).__name__}")
        if not pairs:
            raise ValueError("apply_gradients received no (gradient, variable) pairs. Pass "
                             "zip(grads, model.trainable_variables).")
        grads, variables = zip(*pairs)
        self.apply(grads, variables)
        return self._iterations

    def apply(self, grads, trainable_variables=None):
        """Applies gradients to ``trainable_variables`` (default: the variables it was built with)."""
        grads = list(grads)
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `variables`, the optimizer must already be built on "
                                 "a list of variables. Call `optimizer.build(trainable_variables)` first.")
            variables = list(self._trainable_variables)
        else:
            variables = list(trainable_variables)
        if len(grads) != len(variables):
            raise ValueError(f"Received {len(grads)} gradients for {len(variables)} variables; pass one gradient per "
                             "variable")
        ids = tuple(map(id, variables))
        if ids != self._checked[0]:  # a training loop passes the same list every step: check it once
            check_variables(variables)
            if not self.built:
                self.build(variables)
            self._check_variables_are_known(variables)
            self._checked = (ids, variables)  # holding the list keeps the ids from being reused
        if any(g is None for g in grads):
            grads, variables = self._filter_empty_gradients(grads, variables)
        arrays = [gradient_array(g, v, i) for i, (g, v) in enumerate(zip(grads, variables))]
        with _context.recording_with([]):  # updates are not differentiated; compiled calls stay compiled
            lr_value = None
            if callable(self._learning_rate) and not isinstance(
                    self._learning_rate, (Variable, schedules_module.LearningRateSchedule)):
                lr_value = to_array(self._learning_rate(), floatx())  # Python callables run every step
            self.update_function(variables)(arrays, lr_value)

    def update_function(self, variables):
        """The compiled update (an ``mk.function``) for this list of variables, cached."""
        key = (tuple(map(id, variables)), self.clipnorm, self.clipvalue, self.global_clipnorm, self.weight_decay,
               self.loss_scale_factor)
        function = self._update_functions.get(key)
        if function is None:
            variables = list(variables)

            def update(grads, lr_value):
                # compiled: arrays arrive as Tensors; inlined in a caller's trace: as raw arrays
                lr = None if lr_value is None else _as_tensor(lr_value)
                self._apply_update([_as_tensor(g) for g in grads], variables, lr)

            update.__name__ = f"{self.name}_update"
            function = self._update_functions[key] = Function(update)
        return function

    def _apply_update(self, grads, variables, learning_rate=None):
        lr = self._learning_rate_tensor() if learning_rate is None else learning_rate
        if self.loss_scale_factor is not None:
            grads = [g / float(self.loss_scale_factor) for g in grads]
        if self.gradient_accumulation_steps:
            self._accumulate_or_update(grads, variables, lr)
        else:
            self._update(grads, variables, lr)
        if self.use_ema:
            self._update_model_variables_moving_average(self._trainable_variables)
            if self.ema_overwrite_frequency:
                overwrite = equal(floormod(self.iterations + 1, self.ema_overwrite_frequency), 0)
                for variable, average in zip(self._trainable_variables, self._model_variables_moving_average):
                    variable.assign(where(overwrite, average, variable))
        for variable in variables:  # weight constraints project the updated values, as Keras 3
            if variable.constraint is not None:
                variable.assign(variable.constraint(variable))
        self._iterations.assign_add(1)

    def _update(self, grads, variables, lr):
        grads = self._clip_gradients(grads)
        self._apply_weight_decay(variables, lr)
        self._backend_update_step(grads, variables, lr)

    def _backend_update_step(self, grads, variables, learning_rate):
        """Every variable's ``update_step``; an optimizer with per-step state (Nadam) extends it."""
        for grad, variable in zip(grads, variables):
            self.update_step(grad, variable, learning_rate)

    def _accumulate_or_update(self, grads, variables, lr):
        # Keras: on every n-th call update with the mean of the n gradients and zero the sums,
        # otherwise only add to the sums.
        steps = self.gradient_accumulation_steps
        sums = [self._accumulated_gradients[self._get_variable_index(v)] for v in variables]

        def update():
            self._update([(g + s) / steps for g, s in zip(grads, sums)], variables, lr)
            for s in sums:
                s.assign(zeros_like_(s))
            return ()

        def accumulate():
            for g, s in zip(grads, sums):
                s.assign(g + s)
            return ()

        cond(equal(floormod(self._iterations + 1, steps), 0), update, accumulate)

    def update_step(self, gradient, variable, learning_rate):
        """One variable's update; implemented by subclasses with minikeras ops."""
        raise NotImplementedError(f"Optimizer {self.__class__.__name__} must implement "
                                  "update_step(gradient, variable, learning_rate)")

    def _filter_empty_gradients(self, grads, variables):
        kept = [(g, v) for g, v in zip(grads, variables) if g is not None]
        if not kept:
            raise ValueError(f"No gradients provided for any variable: {[v.path for v in variables]}. Is the loss "
                             "computed from these variables inside the GradientTape?")
        if len(kept) < len(grads):
            missing = [v.path for g, v in zip(grads, variables) if g is None]
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the loss. They are not "
                          "updated. If using `model.compile()`, did you forget to provide a `loss` argument?",
                          stacklevel=4)
        return [g for g, _ in kept], [v for _, v in kept]

    # -- minimize -----------------------------------------------------------------------------
    def minimize(self, loss, var_list, tape=None):
        """Computes gradients of ``loss`` and applies them to ``var_list``.

        Args:
          loss: a zero-argument callable returning the loss, or a Tensor computed under ``tape``.
          var_list: the Variables (or a callable returning them, evaluated after the loss).
          tape: the GradientTape that recorded ``loss`` (required when ``loss`` is a Tensor).
        Returns:
          ``iterations``.
        """
        grads_and_vars = self.compute_gradients(loss, var_list, tape)
        return self.apply_gradients(grads_and_vars)

    def compute_gradients(self, loss, var_list, tape=None):
        """``[(gradient, variable), ...]`` for ``loss`` (see ``minimize``)."""
        if not callable(loss) and tape is None:
            raise ValueError(f"`tape` is required when a `Tensor` loss is passed. Received: loss={loss!r}, tape=None. "
                             "Pass the GradientTape that computed it, or pass the loss as a callable.")
        if callable(loss) and not isinstance(loss, (Tensor, Variable)):
            tape = tape if tape is not None else GradientTape()
            with tape:
                if not callable(var_list):
                    tape.watch(list(var_list))
                loss = loss()
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        return list(zip(tape.gradient(loss, var_list), var_list))

    # -- config -----------------------------------------------------------------------------------
    def get_config(self):
        lr = self._learning_rate
        if isinstance(lr, schedules_module.LearningRateSchedule):
            lr = schedules_module.serialize(lr)
        elif isinstance(lr, Variable):
            lr = float(lr.numpy())
        return {"name": self.name, "learning_rate": lr, "weight_decay": self.weight_decay, "clipnorm": self.clipnorm,
                "global_clipnorm": self.global_clipnorm, "clipvalue": self.clipvalue, "use_ema": self.use_ema,
                "ema_momentum": self.ema_momentum, "ema_overwrite_frequency": self.ema_overwrite_frequency,
                "loss_scale_factor": self.loss_scale_factor,
                "gradient_accumulation_steps": self.gradient_accumulation_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules_module.deserialize(config["learning_rate"], custom_objects)
        return cls(**config)

    def __repr__(self):
        return f"<{self.__class__.__name__} name={self.name!r}>"


def _as_tensor(x):
    return x if isinstance(x, Tensor) else Tensor(x)


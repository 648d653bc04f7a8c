"""Metric: streaming state in non-trainable Variables; Mean, Sum and MeanMetricWrapper.

Every state change goes through ``Variable.assign``/``assign_add``, so the same metric
updates eagerly and inside ``mk.function`` (where its Variables are lifted like any other).
Metric arithmetic is plain ``jax.numpy`` on the arrays behind the Tensors: a metric is never
differentiated, so it records nothing on a GradientTape.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras import initializers
from minikeras.backend import epsilon, floatx
from minikeras.dtypes import as_dtype
from minikeras.module import Module, snake_case
from minikeras.tensor import Tensor, Variable, to_array


@functools.partial(jax.jit, static_argnums=0)
def _zeros(shapes_and_dtypes):
    """Fresh zero arrays, all in one compiled call (a jnp.zeros each costs several times more,
    and fit resets every metric at each epoch)."""
    return [jnp.zeros(shape, dtype) for shape, dtype in shapes_and_dtypes]


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Keras's rule: when the ranks differ by one and the longer ends in 1, squeeze it (or,
    when the shorter has rank 1, expand the shorter instead)."""
    if x1.ndim == x2.ndim:
        return x1, x2
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1 and expand_rank_1:
            x2 = jnp.expand_dims(x2, -1)
        else:
            x1 = jnp.squeeze(x1, -1)
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1 and expand_rank_1:
            x1 = jnp.expand_dims(x1, -1)
        else:
            x2 = jnp.squeeze(x2, -1)
    return x1, x2


def reduce_to_samplewise_values(values, sample_weight, reduce_fn, dtype):
    """Reduces ``values`` to one value per sample (axis 0), weighted by ``sample_weight``.

    Returns ``(values, sample_weight)`` with ``values`` of rank <= 1 already multiplied by
    the weights, and the weights reduced to one per sample (None when none were given).
    """
    values = to_array(values).astype(dtype)
    if sample_weight is not None:
        sample_weight = to_array(sample_weight, dtype)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_ndim = sample_weight.ndim
        if values.ndim > weight_ndim:
            values = reduce_fn(values, axis=tuple(range(weight_ndim, values.ndim)))
        try:
            sample_weight = jnp.broadcast_to(sample_weight, values.shape)
        except ValueError:
            raise ValueError(f"sample_weight of shape {tuple(sample_weight.shape)} cannot be broadcast to the "
                             f"metric values of shape {tuple(values.shape)}") from None
        values = values * sample_weight
        if weight_ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=tuple(range(1, weight_ndim)))
    if values.ndim > 1:
        values = reduce_fn(values, axis=tuple(range(1, values.ndim)))
    return values, sample_weight


def _initial_value(initializer, shape, dtype):
    if isinstance(initializer, str):
        name = initializer.lower()
        if name == "zeros":
            return np.zeros(shape, dtype)
        if name == "ones":
            return np.ones(shape, dtype)
        return initializers.get(initializer)(shape, dtype=dtype)
    if callable(initializer):
        return initializer(shape, dtype=dtype)
    return np.broadcast_to(np.asarray(initializer, dtype), shape)


class Metric(Module):
    """The base class of metrics: state lives in Variables made by ``add_variable``.

    Subclasses implement ``update_state(y_true, y_pred, sample_weight=None)`` and
    ``result()``, and change state only with ``assign``/``assign_add`` so that they also
    run inside ``mk.function``. ``reset_state`` zeroes every variable; calling the metric
    updates it and returns the result.

    >>> m = mk.metrics.Mean()
    >>> m.update_state([1.0, 3.0, 5.0, 7.0])
    >>> float(m.result())
    4.0
    """

    def __init__(self, name=None, dtype=None):
        super().__init__(name=name)
        self._dtype = as_dtype(dtype) if dtype is not None else np.dtype(floatx())

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, value):
        self._name = str(value)

    @property
    def dtype(self):
        return self._dtype

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="sum", name=None):
        """Creates a non-trainable state Variable owned by this metric and returns it.

        ``aggregation`` (Keras 3's, for distributed metrics) is accepted; the state is summed."""
        dtype = as_dtype(dtype) if dtype is not None else self._dtype
        shape = tuple(int(n) for n in shape)
        variable = Variable(lambda: _initial_value(initializer, shape, dtype), trainable=False,
                            name=name or "variable", dtype=dtype)
        variable.path = f"{self.name}/{variable.name}"
        return variable

    def add_weight(self, *args, shape=(), initializer=None, dtype=None, aggregation="sum", name=None):
        """``add_variable`` with a scalar by default, as in the guides' custom metrics:
        ``self.true_positives = self.add_weight(name="ctp", initializer="zeros")``. Positional
        arguments are Keras 3's ``(shape, initializer, dtype, name)``, or TF 2's ``(name, shape,
        initializer, dtype)`` when the first is a string."""
        order = ("name", "shape", "initializer", "dtype") if args and isinstance(args[0], str) else (
            "shape", "initializer", "dtype", "name")
        if len(args) > len(order):
            raise TypeError(f"add_weight() takes at most {len(order)} positional arguments ({', '.join(order)}) but "
                            f"{len(args)} were given")
        given = {"shape": shape, "initializer": initializer, "dtype": dtype, "name": name, **dict(zip(order, args))}
        return self.add_variable(given["shape"], initializer=given["initializer"] or "zeros", dtype=given["dtype"],
                                 aggregation=aggregation, name=given["name"])

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement update_state()")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must implement result()")

    def reset_state(self):
        """Sets every state variable back to zero."""
        variables = self.variables
        for variable, zero in zip(variables, _zeros(tuple((v.shape, v.dtype) for v in variables))):
            variable.assign(zero)

    def reset_states(self):
        """TF 2's older name for ``reset_state``."""
        self.reset_state()

    def __call__(self, *args, **kwargs):
        """Updates the state with this batch and returns the result so far."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class Sum(Metric):
    """The (weighted) sum of the values given: ``[1, 3, 5, 7]`` sums to 16, with
    ``sample_weight=[1, 1, 0, 0]`` to 4."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")

    def update_state(self, values, sample_weight=None):
        values, _ = reduce_to_samplewise_values(values, sample_weight, jnp.sum, self.dtype)
        self.total.assign_add(jnp.sum(values))

    def result(self):
        return Tensor(self.total._read_array())


def _mean_increments(values, sample_weight, dtype):
    """(sum of the weighted per-sample values, number of samples or sum of their weights)."""
    values, sample_weight = reduce_to_samplewise_values(values, sample_weight, jnp.mean, dtype)
    if sample_weight is not None:
        count = jnp.sum(sample_weight)
    else:
        count = values.shape[0] if values.ndim >= 1 else 1
    return jnp.sum(values), jnp.asarray(count, dtype)


_compiled_mean_increments = jax.jit(_mean_increments, static_argnames="dtype")


@functools.lru_cache(maxsize=None)
def _compiled_wrapper_increments(fn, dtype, kwargs, fuzz):
    """One jitted program per (metric function, dtype, arguments, ``epsilon()``): eagerly, an
    update is a single dispatch instead of one per jnp op (and compiles once per input shape).
    ``fuzz`` is the epsilon ``fn`` reads while traced, so a changed epsilon gets its own program."""
    kwargs = dict(kwargs)

    def increments(y_true, y_pred, sample_weight):
        return _mean_increments(fn(y_true, y_pred, **kwargs), sample_weight, dtype)

    return jax.jit(increments)


def _masked_weights(sample_weight, mask, dtype):
    """``sample_weight`` (None for ones) times ``mask`` as 0/1, their ranks aligned as Keras 3's
    ``squeeze_or_expand_to_same_rank`` does."""
    weights = jnp.asarray(to_array(mask)).astype(dtype)
    if sample_weight is None:
        return Tensor(weights)
    given = jnp.asarray(to_array(sample_weight)).astype(dtype)
    if given.ndim == weights.ndim + 1 and given.shape[-1] == 1:
        given = given[..., 0]
    elif weights.ndim == given.ndim + 1 and weights.shape[-1] == 1:
        weights = weights[..., 0]
    while given.ndim < weights.ndim:
        given = given[..., None]
    return Tensor(given * weights)


def _array_or_none(x, dtype=None):
    return None if x is None else to_array(x, dtype)


class Mean(Metric):
    """The (weighted) mean of the values given: ``[1, 3, 5, 7]`` averages to 4, with
    ``sample_weight=[1, 1, 0, 0]`` to 2.

    Values of rank > 1 are first averaged to one value per sample (axis 0); the count is
    the number of samples, or the sum of the per-sample weights.
    """

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values, sample_weight=None):
        if (isinstance(sample_weight, (int, float)) and not isinstance(sample_weight, bool)
                and np.ndim(values) == 0 and not isinstance(values, (list, tuple))):
            self._accumulate(to_array(values).astype(self.dtype) * sample_weight, sample_weight)
            return
        self._accumulate(*_compiled_mean_increments(to_array(values), _array_or_none(sample_weight, self.dtype),
                                                    dtype=self.dtype.name))

    def _accumulate(self, total, count):
        self.total.assign_add(total)
        self.count.assign_add(count)

    def result(self):
        total, count = self.total._read_array(), self.count._read_array()
        return Tensor(jnp.where(count == 0, jnp.zeros_like(total), total / jnp.where(count == 0, 1, count)))


class MeanMetricWrapper(Mean):
    """The running mean of ``fn(y_true, y_pred, **kwargs)``, a per-sample metric function.

    ``fn`` receives Tensors and runs eagerly op by op (it may use any minikeras op); the
    built-in metrics instead compile their function with the update into one program.

    >>> def squared_error(y_true, y_pred):
    ...     return mk.square(y_true - y_pred)
    >>> m = mk.metrics.MeanMetricWrapper(squared_error)
    """

    _pure_jax_fn = False  # True for our own functions of jax arrays, which are compiled

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        if not callable(fn):
            raise TypeError(f"MeanMetricWrapper expects a function fn(y_true, y_pred), received {fn!r}")
        if name is None:
            name = snake_case(getattr(fn, "__name__", type(fn).__name__))
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = getattr(y_pred, "_keras_mask", None)
        if mask is not None:  # a Keras mask on the predictions: masked entries do not count (Keras 3)
            sample_weight = _masked_weights(sample_weight, mask, self.dtype)
        if self._pure_jax_fn:
            compiled = _compiled_wrapper_increments(self._fn, self.dtype.name, tuple(sorted(self._fn_kwargs.items())),
                                                    epsilon())
            self._accumulate(*compiled(to_array(y_true), to_array(y_pred), _array_or_none(sample_weight, self.dtype)))
            return
        values = self._fn(_as_tensor(y_true), _as_tensor(y_pred), **self._fn_kwargs)
        return super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        config = super().get_config()
        config["fn"] = getattr(self._fn, "__name__", repr(self._fn))
        config.update(self._fn_kwargs)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        fn = config.pop("fn")
        if isinstance(fn, str):
            from minikeras import metrics  # the metric functions by name are defined above this module
            fn = getattr(metrics, fn)
        return cls(fn, **config)


def _as_tensor(x):
    return x if isinstance(x, Tensor) else Tensor(to_array(x))

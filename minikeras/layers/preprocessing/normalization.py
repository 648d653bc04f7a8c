"""``Normalization``: ``(x - mean) / sqrt(variance)`` per feature, with ``adapt`` (compiled ops).

The mean and variance are non-trainable weights named as Keras 3 names them (``mean``,
``variance``, ``count``), so a ``.weights.h5`` file interchanges; ``adapt`` reads the data
once, batch by batch, merging each batch's mean and variance into the running ones with
Keras's weights (the mean of the squared deviations: the population variance).
"""
import math

import numpy as np

from minikeras import _context
from minikeras.backend import epsilon, is_tracer
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing import adapt_data
from minikeras.layers.preprocessing.host_layer import as_input_tensor
from minikeras.ops.elementwise import cast
from minikeras.ops.math import add, divide, maximum, multiply, sqrt, subtract
from minikeras.ops.reshape import reshape
from minikeras.tensor import Tensor, to_array


class Normalization(Layer):
    """Shifts and scales inputs to mean 0 and variance 1 per feature (Keras 3's ``Normalization``).

        norm = mk.layers.Normalization()
        norm.adapt(train_features)        # mean and variance of each column
        model = mk.Sequential([norm, mk.layers.Dense(1)])

    Args:
      axis: the axis (or axes) that keep separate statistics; -1 by default (features), None
        for one mean and variance over everything.
      mean, variance: given statistics instead of ``adapt`` (scalars or per-feature arrays).
      invert: apply the inverse (``mean + x * sqrt(variance)``).
    """

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        axis = () if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
        self.axis = axis
        self.input_mean = mean
        self.input_variance = variance
        self.invert = invert
        self.supports_masking = True
        self._build_input_shape = None
        self._adapted = False
        if (mean is not None) != (variance is not None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` must be set. Received: "
                             f"mean={mean} and variance={variance}")
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError(f"When setting values directly, `mean` and `variance` must have the same shape. "
                                 f"Received: mean shape {np.shape(mean)} and variance shape {np.shape(variance)}")
            if len(np.shape(mean)) > len(self.axis):
                raise ValueError(f"The rank of `mean` must be less than or equal to the number of axes "
                                 f"({len(self.axis)}). Received: mean shape {np.shape(mean)} for axis {self.axis}")

    def build(self, input_shape):
        if input_shape is None:
            return
        input_shape = tuple(input_shape)
        ndim = len(input_shape)
        self._build_input_shape = input_shape
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(f"All `axis` values must be in the range [-ndim, ndim). Received inputs with ndim={ndim}, "
                             f"while axis={self.axis}")
        self._keep_axis = tuple(sorted(d if d >= 0 else d + ndim for d in self.axis))
        for d in self._keep_axis:
            if input_shape[d] is None:
                raise ValueError(f"All `axis` values to be kept must have a known shape. Received axis={self.axis}, "
                                 f"inputs.shape={input_shape}, with unknown axis at index {d}")
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = tuple(input_shape[d] if d in self._keep_axis else 1 for d in range(ndim))
        self._mean_and_var_shape = tuple(input_shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._mean_and_var_shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=self._mean_and_var_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int32", initializer="zeros", trainable=False)
        else:
            mean = np.asarray(self.input_mean, np.float32)
            variance = np.asarray(self.input_variance, np.float32)
            if mean.ndim:
                expanded = [1] * ndim
                for i in range(1, mean.ndim + 1):
                    expanded[self._keep_axis[-i]] = mean.shape[-i]
                mean, variance = mean.reshape(expanded), variance.reshape(expanded)
            self._given = (np.broadcast_to(mean, self._broadcast_shape).astype(self.dtype),
                           np.broadcast_to(variance, self._broadcast_shape).astype(self.dtype))
        self.built = True

    # -- adapt -----------------------------------------------------------------------------------
    def adapt(self, data, batch_size=None, steps=None):
        """Computes the mean and variance of ``data`` (an array, Tensor, Dataset of batches or
        iterable of batches; a Dataset of single rows is batched by 128) in one pass."""
        if not adapt_data.is_array_like(data) and hasattr(data, "element_spec") and hasattr(data, "batch"):
            spec = data.element_spec
            spec = spec[0] if isinstance(spec, tuple) else spec
            if spec.shape is not None and len(spec.shape) == 1:
                data = data.batch(128)
        total_mean = total_var = None
        total_count = 0
        for batch in adapt_data.batches(data, batch_size, steps):
            if batch.dtype.kind not in "biuf":
                raise TypeError(f"Normalization '{self.name}'.adapt expects numbers, received data of dtype "
                                f"{'string' if batch.dtype == object else batch.dtype} and shape {batch.shape}")
            batch = batch.astype(np.float64)
            if not self.built:
                self._build_from(Tensor(to_array(batch[:1].astype(np.float32))) if batch.ndim else batch)
                self._build_input_shape = (None,) + tuple(batch.shape[1:]) if batch.ndim else ()
            self._check_adapt_shape(batch)
            batch_mean = batch.mean(axis=self._reduce_axis)
            batch_var = batch.var(axis=self._reduce_axis)
            count = math.prod(batch.shape[d] for d in self._reduce_axis) if self._reduce_axis else 1
            if total_mean is None:
                total_mean, total_var, total_count = batch_mean, batch_var, count
                continue
            total_count += count
            w = count / total_count
            new_mean = total_mean * (1 - w) + batch_mean * w
            total_var = ((total_var + (total_mean - new_mean) ** 2) * (1 - w)
                         + (batch_var + (batch_mean - new_mean) ** 2) * w)
            total_mean = new_mean
        if total_mean is None:
            raise ValueError(f"Normalization '{self.name}'.adapt received no data (an empty dataset or iterable)")
        if self.input_mean is not None:
            raise ValueError(f"Normalization '{self.name}' was given `mean` and `variance`; it cannot be adapted")
        self.adapt_mean.assign(np.asarray(total_mean, np.float32).reshape(self._mean_and_var_shape))
        self.adapt_variance.assign(np.asarray(total_var, np.float32).reshape(self._mean_and_var_shape))
        self._adapted = True

    def finalize_state(self):
        """Keras 3's hook: the mean and variance the layer's weights hold now are its statistics,
        also their initial zeros and ones (then the layer passes inputs through, as Keras's does:
        the state of an EfficientNet built with ``weights=None``). Without it, adapt or loaded
        weights, calling an un-adapted layer is an error here."""
        if self.input_mean is None and self.built:
            self._adapted = True

    def _check_adapt_shape(self, batch):
        expected = self._build_input_shape
        if batch.ndim != len(expected) or any(batch.shape[d] != expected[d] for d in self._keep_axis):
            raise ValueError(f"Normalization '{self.name}' was built for inputs of shape {expected}, but adapt() "
                             f"received data of shape {batch.shape} (rank {batch.ndim}); the kept axes {self.axis} "
                             "must match")

    # -- calling ---------------------------------------------------------------------------------
    def _statistics(self):
        # in the compute dtype, as Keras 3 (bfloat16 under 'mixed_bfloat16', its output's dtype)
        if self.input_mean is not None:
            return tuple(cast(Tensor(to_array(given)), self.compute_dtype) for given in self._given)
        mean = reshape(cast(self.adapt_mean.value(), self.compute_dtype), self._broadcast_shape)
        variance = reshape(cast(self.adapt_variance.value(), self.compute_dtype), self._broadcast_shape)
        return mean, variance

    @property
    def mean(self):
        """The mean the layer subtracts, in the shape it broadcasts to (Keras 3's ``mean`` once
        built: adapted, loaded or given)."""
        return self._statistic(0)

    @property
    def variance(self):
        """The variance the layer divides by (its square root), as ``mean``."""
        return self._statistic(1)

    def _statistic(self, index):
        if not self.built or self._build_input_shape is None:
            raise AttributeError(f"Normalization '{self.name}' has no {('mean', 'variance')[index]} yet: call "
                                 "`adapt(data)` or build it first")
        return self._statistics()[index]

    def _check_adapted(self):
        """An un-adapted layer (no mean/variance given, never adapted, its weights at their
        initial zeros and ones) would pass inputs through unchanged: that is an error here."""
        if self.input_mean is not None or self._adapted:
            return
        from_file = np.any(np.asarray(self.adapt_mean.numpy()) != 0) or np.any(
            np.asarray(self.adapt_variance.numpy()) != 1)
        if from_file:  # weights loaded from a file
            self._adapted = True
            return
        raise ValueError(f"Normalization '{self.name}' has no mean and variance yet: call `adapt(data)` on training "
                         "data first, or pass `mean=` and `variance=` to the constructor")

    def call(self, inputs):
        if inputs.dtype == object:
            raise TypeError(f"Normalization '{self.name}' expects numbers, received strings of shape {inputs.shape}")
        traced = _context.call_state.traces or is_tracer(inputs._value)
        if self.input_mean is None and not self._adapted and not traced:
            self._check_adapted()  # (inside a trace or a shape evaluation the weights' values are not known)
        x = cast(inputs, self.compute_dtype) if inputs.dtype != self.compute_dtype else inputs
        mean, variance = self._statistics()
        scale = maximum(sqrt(variance), epsilon())
        if self.invert:
            return add(mean, multiply(x, scale))
        return divide(subtract(x, mean), scale)

    def _convert_inputs(self, inputs):
        return super()._convert_inputs(as_input_tensor(inputs))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({"axis": self.axis, "invert": self.invert,
                       "mean": np.array(self.input_mean).tolist() if self.input_mean is not None else None,
                       "variance": np.array(self.input_variance).tolist() if self.input_variance is not None else None})
        return config

    def get_build_config(self):
        if self._build_input_shape:
            return {"input_shape": self._build_input_shape}
        return None

    def build_from_config(self, config):
        if config:
            self.build(config["input_shape"])


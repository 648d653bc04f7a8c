"""The Loss base class and Keras 3's rules for sample weights, masks and reductions."""
import jax.numpy as jnp
import numpy as np

from minikeras.backend import floatx, is_tracer
from minikeras.dtypes import as_dtype
from minikeras.module import compact_snake_case
from minikeras.ops.array import expand_dims, reshape, squeeze
from minikeras.ops.math import cast, divide, equal, where
from minikeras.ops.reduce import divide_by_count, reduce_sum
from minikeras.tensor import Tensor, Variable, to_array

REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None)


def standardize_reduction(reduction):
    if reduction not in REDUCTIONS:
        raise ValueError(f"Invalid value for argument `reduction`. Expected one of {list(REDUCTIONS)}. "
                         f"Received: reduction={reduction!r}")
    return reduction


def to_tensor(x, dtype=None):
    """``x`` as a Tensor (Variables are read, so tapes see them), cast to ``dtype`` if given."""
    if isinstance(x, Variable):
        x = x.value()
    elif not isinstance(x, Tensor):
        return Tensor(to_array(x, dtype))
    if dtype is not None and x.dtype != dtype:
        x = cast(x, dtype)
    return x


def to_float_tensor(x, dtype=None):
    """``x`` as a floating Tensor: its own float dtype unless ``dtype`` is given, else floatx."""
    x = to_tensor(x)
    if dtype is not None:
        return cast(x, dtype) if x.dtype != dtype else x
    return x if x.dtype.kind == "f" or x.dtype == as_dtype("bfloat16") else cast(x, floatx())


def is_concrete(x):
    return not is_tracer(x._value)


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Keras's rank fix-up: when ranks differ by one and the longer ends in 1, squeeze it (or
    expand a rank-1 partner), so (batch,) and (batch, 1) line up."""
    if x1.ndim == x2.ndim:
        return x1, x2
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1 and expand_rank_1:
            x2 = expand_dims(x2, -1)
        else:
            x1 = squeeze(x1, -1)
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1 and expand_rank_1:
            x1 = expand_dims(x1, -1)
        else:
            x2 = squeeze(x2, -1)
    return x1, x2


def divide_no_nan(x, y):
    zero = equal(y, 0)
    return where(zero, 0, divide(x, where(zero, 1, y)))


def _apply_mask(sample_weight, mask, reduction):
    """Folds a validity mask into the sample weights; for mean reductions the valid entries get
    weight total/valid so that the mean is over valid entries only."""
    if mask is None:
        return sample_weight
    if reduction in ("mean", "sum_over_batch_size"):
        mask = mask * divide_no_nan(float(max(mask.size, 1)), reduce_sum(mask))
    if sample_weight is None:
        return mask
    mask, sample_weight = squeeze_or_expand_to_same_rank(mask, sample_weight)
    return sample_weight * mask


def reduce_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    """Reduces weighted per-sample losses: 'sum', a mean over all elements
    ('sum_over_batch_size', 'mean'), over the weights ('mean_with_sample_weight'), or none."""
    if reduction in (None, "none") or values.shape in ((), (0,)):
        return values
    loss = reduce_sum(values)
    if reduction == "sum":
        return loss
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        return divide_no_nan(loss, reduce_sum(cast(sample_weight, loss.dtype)))
    count = values.size
    return divide_by_count(loss, count) if type(count) is not int or count else loss


def reduce_weighted_values(values, sample_weight=None, mask=None, reduction="sum_over_batch_size", dtype=None,
                           name="loss"):
    """Applies ``mask`` and ``sample_weight`` to per-sample ``values`` and reduces them."""
    reduction = standardize_reduction(reduction)
    values = to_tensor(values, dtype)
    if sample_weight is not None:
        sample_weight = to_tensor(sample_weight, values.dtype)
    if mask is not None:
        mask = cast(mask, values.dtype)
    sample_weight = _apply_mask(sample_weight, mask, reduction)
    if sample_weight is not None:
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        if 0 < sample_weight.ndim < values.ndim:
            # (batch,) weights on (batch, steps) losses weigh whole samples, as tf.keras does.
            sample_weight = reshape(sample_weight, sample_weight.shape + (1,) * (values.ndim - sample_weight.ndim))
        try:
            np.broadcast_shapes(values.shape, sample_weight.shape)
        except ValueError:
            raise ValueError(f"{name}: sample_weight of shape {sample_weight.shape} does not fit the per-sample "
                             f"losses of shape {values.shape}; pass one weight per sample") from None
        values = values * sample_weight
    return reduce_values(values, sample_weight, reduction)


class Loss:
    """Base class of losses: ``loss(y_true, y_pred, sample_weight=None)`` -> a scalar Tensor
    (or per-sample values with ``reduction='none'``).

    Subclasses implement ``call(y_true, y_pred)`` returning per-sample losses.

    Args:
      reduction: 'sum_over_batch_size' (default: the sum of weighted losses divided by their
        number), 'sum', 'mean', 'mean_with_sample_weight' (divided by the sum of weights),
        'none' or None (no reduction).
      name: the loss's name.
      dtype: the computation dtype (default floatx, float32); inputs are cast to it.
    """

    _integer_labels = False  # sparse losses keep y_true as integers

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or compact_snake_case(self.__class__.__name__)
        self.reduction = standardize_reduction(reduction)
        self._dtype = as_dtype(dtype) or floatx()

    @property
    def dtype(self):
        return self._dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        in_mask = getattr(y_pred, "_keras_mask", None)  # a Keras mask on the predictions: masked entries do not count
        y_pred = to_tensor(y_pred, self._dtype)
        y_true = to_tensor(y_true) if self._integer_labels else to_tensor(y_true, self._dtype)
        losses, mask = self._call_with_mask(y_true, y_pred)
        if in_mask is not None:
            in_mask = cast(in_mask, "bool")
            mask = in_mask if mask is None else cast(mask, "bool") & in_mask
        return reduce_weighted_values(losses, sample_weight=sample_weight, mask=mask, reduction=self.reduction,
                                      dtype=self._dtype, name=self.name)

    def _call_with_mask(self, y_true, y_pred):
        return self.call(y_true, y_pred), None

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"Loss {self.__class__.__name__} must implement call(y_true, y_pred)")

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{self.__class__.__name__} name={self.name!r} reduction={self.reduction!r}>"


class LossFunctionWrapper(Loss):
    """A Loss made from a per-sample function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), reduction=reduction, dtype=dtype)
        self.fn = fn
        # a function of integer labels (sparse cross-entropy) gets them as they are, not cast to
        # float and back (compile(loss='sparse_categorical_crossentropy') wraps the function)
        self._integer_labels = getattr(fn, "integer_labels", False)
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        config = {**Loss.get_config(self), **self._fn_kwargs}
        if type(self) is LossFunctionWrapper:  # subclasses fix their function themselves
            config["fn"] = getattr(self.fn, "__name__", repr(self.fn))
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if cls is LossFunctionWrapper:
            from minikeras.losses import get  # the loss functions by name are defined above this module
            fn = config.pop("fn")
            return cls(get(fn) if isinstance(fn, str) else fn, **config)
        return cls(**config)

    def __repr__(self):
        return f"<LossFunctionWrapper({getattr(self.fn, '__name__', self.fn)}, kwargs={self._fn_kwargs})>"



def check_compatible(name, y_true, y_pred):
    """Raises a ValueError naming the loss when the two shapes cannot broadcast together."""
    try:
        jnp.broadcast_shapes(y_true.shape, y_pred.shape)  # symbolic sizes too (NumPy rejects them)
    except ValueError:
        raise ValueError(f"{name}: y_true and y_pred must have the same shape, received y_true.shape={y_true.shape}, "
                         f"y_pred.shape={y_pred.shape}") from None


def concrete_numpy(x):
    """The NumPy value of a Tensor when it is concrete (eager), else None."""
    return np.asarray(x._value) if is_concrete(x) else None

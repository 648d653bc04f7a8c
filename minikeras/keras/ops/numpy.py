"""``keras.ops.numpy``: the 220 NumPy-like ops of Keras 3 (``keras/src/ops/numpy.py``).

Each has Keras 3's signature and defaults and computes what Keras 3's JAX backend computes
(its conversions, casts and result dtypes: ``keras.ops.exp`` of int32 is float32, ``mean``
of float16 accumulates in float32), as one recorded op whose gradient is the forward's
``jax.vjp``, itself recorded, so every op differentiates on a ``GradientTape`` to any order
wherever Keras's does (``numpy_call``). On symbolic tensors (``mk.Input``) an op records a
node of the functional graph.

    from minikeras import keras
    y = keras.ops.mean(keras.ops.square(x), axis=-1)

Ops whose output shape depends on the values (``nonzero``, ``unique`` without ``size``,
``where`` with one argument, ``bincount``'s length) compute that shape eagerly, so they cannot
run inside ``mk.function`` on traced values, as in Keras on JAX.
"""
import builtins
import math

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import floatx
from minikeras.keras.ops import numpy_forwards as fw
from minikeras.keras.ops.keras_op import keras_op
from minikeras.keras.ops.numpy_call import as_axis, define, keras_input, run, to_list, value
from minikeras.ops.linalg import matmul as _linalg_matmul
from minikeras.symbolic import is_symbolic
from minikeras.tensor import Tensor, Variable

# ----------------------------------------------------------------------------- elementwise, one input

_TO_FLOAT = ("arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "ceil", "cos", "cosh", "floor", "sin",
             "sinc", "sinh", "tan", "tanh", "angle", "exp", "exp2", "expm1")
_INT64_TO_FLOAT = ("log", "log10", "log1p", "log2", "sqrt")
_PLAIN_UNARY = {"absolute": "absolute", "fabs": "fabs", "cbrt": "cbrt", "conj": "conjugate",
                "conjugate": "conjugate", "copy": "copy", "deg2rad": "deg2rad", "rad2deg": "rad2deg",
                "imag": "imag", "real": "real", "reciprocal": "reciprocal", "sign": "sign", "signbit": "signbit",
                "negative": "negative", "square": "square", "isfinite": "isfinite", "isinf": "isinf",
                "isnan": "isnan", "isneginf": "isneginf", "isposinf": "isposinf", "isreal": "isreal",
                "logical_not": "logical_not", "bitwise_invert": "invert", "fliplr": "fliplr", "flipud": "flipud",
                "ravel": "ravel", "corrcoef": "corrcoef"}
_PLAIN_BINARY = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
                 "true_divide": "divide", "power": "power", "maximum": "maximum", "minimum": "minimum",
                 "fmax": "fmax", "fmin": "fmin", "mod": "mod", "fmod": "fmod", "floor_divide": "floor_divide",
                 "equal": "equal", "not_equal": "not_equal", "greater": "greater", "greater_equal": "greater_equal",
                 "less": "less", "less_equal": "less_equal", "logical_and": "logical_and",
                 "logical_or": "logical_or", "logical_xor": "logical_xor", "heaviside": "heaviside",
                 "hypot": "hypot", "gcd": "gcd", "lcm": "lcm", "kron": "kron", "inner": "inner", "vdot": "vdot",
                 "dot": "dot", "outer": "outer", "nextafter": "nextafter"}
_BITWISE = {"bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor"}
_BOTH_TO_FLOAT = ("arctan2", "logaddexp", "logaddexp2")

# forwards made once, so that each op's compiled programs are found again (jax_forward's key)
_STD = fw.int64_to_float(jnp.std)
_STACK = fw.sequence(jnp.stack)
_MESHGRID = fw.tuple_out(fw.with_params(jnp.meshgrid))
_UNRAVEL_INDEX = fw.tuple_out(fw.with_params(jnp.unravel_index))
_SLOGDET = fw.tuple_out(fw.with_params(jnp.linalg.slogdet))
_HISTOGRAM = fw.tuple_out(fw.histogram)
_KAISER = fw.window(jnp.kaiser)
_FORWARDS = {}
for _name in _TO_FLOAT:
    _FORWARDS[_name] = fw.to_float(getattr(jnp, _name))
for _name in _INT64_TO_FLOAT:
    _FORWARDS[_name] = fw.int64_to_float(getattr(jnp, _name))
for _name in _BOTH_TO_FLOAT:
    _FORWARDS[_name] = fw.both_to_float(getattr(jnp, _name))


def _floatx_unary(name):
    forward = _FORWARDS[name]

    def op(x):
        return run(name, forward, x, floatx=floatx())
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` (integer and bool inputs computed in floatx, as Keras)."
    return keras_op(name)(op)


def _floatx_binary(name):
    forward = _FORWARDS[name]

    def op(x1, x2):
        return run(name, forward, x1, x2, floatx=floatx())
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` of ``x1`` and ``x2`` (broadcast), in their float result dtype."
    return keras_op(name)(op)


for _name in _TO_FLOAT + _INT64_TO_FLOAT:
    globals()[_name] = _floatx_unary(_name)
for _name in _BOTH_TO_FLOAT:
    globals()[_name] = _floatx_binary(_name)
for _name, _jnp_name in _PLAIN_UNARY.items():
    globals()[_name] = define(_name, fw.with_params(getattr(jnp, _jnp_name)), ("x",),
                              f"Elementwise ``{_name}`` (``jnp.{_jnp_name}``), dtype as Keras 3 on JAX.")
for _name, _jnp_name in _PLAIN_BINARY.items():
    globals()[_name] = define(_name, fw.with_params(getattr(jnp, _jnp_name)), ("x1", "x2"),
                              f"``{_name}`` of ``x1`` and ``x2`` (broadcast; ``jnp.{_jnp_name}``).")
for _name, _jnp_name in _BITWISE.items():
    globals()[_name] = define(_name, fw.with_params(getattr(jnp, _jnp_name)), ("x", "y"),
                              f"Bitwise ``{_name}`` of integer or bool ``x`` and ``y``.")
del _name, _jnp_name


def abs(x):  # noqa: A001
    """The absolute value of ``x``, elementwise."""
    return absolute(x)  # noqa: F821 (defined above from the table)


def bitwise_not(x):
    """Bitwise NOT of ``x`` (``bitwise_invert``)."""
    return bitwise_invert(x)  # noqa: F821


def _shift(name, jnp_fn):
    forward = fw.with_params(jnp_fn)

    def op(x, y):
        return run(name, forward, x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``x`` shifted bitwise by ``y`` ({name})."
    return keras_op(name)(op)


bitwise_left_shift = _shift("bitwise_left_shift", jnp.left_shift)
bitwise_right_shift = _shift("bitwise_right_shift", jnp.right_shift)


def left_shift(x, y):
    """``bitwise_left_shift``."""
    return bitwise_left_shift(x, y)


def right_shift(x, y):
    """``bitwise_right_shift``."""
    return bitwise_right_shift(x, y)


@keras_op("matmul")
def matmul(x1, x2):
    """Matrix product of ``x1`` and ``x2`` (int8 x int8 accumulates to int32, as Keras)."""
    if _float32_matrix(x1) and _float32_matrix(x2) and x1.shape[1] == x2.shape[0]:
        # The same op as layers.Dense's product, so a Dense written with keras.ops gets its
        # weight gradient x^T g on the same kernel (jnp.matmul's gradient would not).
        return _linalg_matmul(keras_input(x1), keras_input(x2))
    if _float32_batch(x1, x2):  # an attention written with keras.ops: mk.matmul's batched kernel
        return _linalg_matmul(keras_input(x1), keras_input(x2))
    return run("matmul", fw.matmul, x1, x2)


def _float32_matrix(x):
    """Whether ``x`` is a 2-D float32 tensor or array (checked without converting anything, so
    that other inputs reach ``run`` and its errors as they are)."""
    return isinstance(x, (Tensor, Variable, jax.Array, np.ndarray)) and len(x.shape) == 2 and x.dtype == jnp.float32


def _float32_batch(x1, x2):
    """Whether ``x1 @ x2`` is a batch of float32 products, 3-D or 4-D operands with the same batch
    axes (no broadcasting) and matching inner sizes (checked without converting anything)."""
    arrays = (Tensor, Variable, jax.Array, np.ndarray)  # (this module's ``all`` is keras.ops.all)
    return (isinstance(x1, arrays) and isinstance(x2, arrays) and x1.dtype == x2.dtype == jnp.float32
            and len(x1.shape) == len(x2.shape) and len(x1.shape) in (3, 4) and x1.shape[:-2] == x2.shape[:-2]
            and x1.shape[-1] == x2.shape[-2])


@keras_op("divide_no_nan")
def divide_no_nan(x1, x2):
    """``x1 / x2``, 0 where ``x2`` is 0."""
    return run("divide_no_nan", fw.divide_no_nan, x1, x2)


@keras_op("ldexp")
def ldexp(x1, x2):
    """``x1 * 2 ** x2``; ``x2`` must be an integer."""
    x2 = keras_input(x2)
    if not jnp.issubdtype(x2.dtype, jnp.integer):
        raise TypeError(f"ldexp exponent must be an integer type. Received: x2 dtype={x2.dtype.name}")
    return run("ldexp", fw.with_params(jnp.ldexp), x1, x2)


@keras_op("i0")
def i0(x):
    """The modified Bessel function of the first kind, order 0."""
    return run("i0", fw.i0, x, floatx=floatx())


@keras_op("round")
def round(x, decimals=0):  # noqa: A001
    """``x`` rounded to ``decimals`` decimals (half to even)."""
    return run("round", fw.round_, x, decimals=decimals, floatx=floatx())


@keras_op("trunc")
def trunc(x):
    """``x`` rounded towards zero (integers unchanged)."""
    return run("trunc", fw.trunc, x)


@keras_op("clip")
def clip(x, x_min, x_max):
    """``x`` clipped to ``[x_min, x_max]`` (bool computed as int32)."""
    return run("clip", fw.clip, x, x_min, x_max)


@keras_op("nan_to_num")
def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN, +inf and -inf replaced."""
    return run("nan_to_num", fw.with_params(jnp.nan_to_num), x, nan=nan, posinf=posinf, neginf=neginf)


@keras_op("isclose")
def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Elementwise ``|x1 - x2| <= atol + rtol * |x2|``."""
    return run("isclose", fw.with_params(jnp.isclose), x1, x2, rtol=rtol, atol=atol, equal_nan=equal_nan)


@keras_op("allclose")
def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Whether ``isclose`` holds everywhere (a bool scalar)."""
    return run("allclose", fw.with_params(jnp.allclose), x1, x2, rtol=rtol, atol=atol, equal_nan=equal_nan)


@keras_op("isin")
def isin(x1, x2, assume_unique=False, invert=False):
    """Whether each element of ``x1`` is in ``x2``."""
    return run("isin", fw.with_params(jnp.isin), x1, x2, assume_unique=assume_unique, invert=invert)


@keras_op("digitize")
def digitize(x, bins):
    """The index of the bin of ``bins`` each element of ``x`` falls in."""
    return run("digitize", fw.with_params(jnp.digitize), x, bins)


@keras_op("append")
def append(x1, x2, axis=None):
    """``x2`` appended to ``x1`` along ``axis`` (both flattened when None)."""
    return run("append", fw.with_params(jnp.append), x1, x2, axis=axis)


@keras_op("cross")
def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of vectors of 2 or 3 components."""
    return run("cross", fw.with_params(jnp.cross), x1, x2, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


@keras_op("tensordot")
def tensordot(x1, x2, axes=2):
    """The tensor dot product over ``axes``."""
    axes = tuple(tuple(a) if isinstance(a, list) else a for a in axes) if isinstance(axes, (list, tuple)) else axes
    return run("tensordot", fw.with_params(jnp.tensordot), x1, x2, axes=axes)


@keras_op("einsum")
def einsum(subscripts, *operands, **kwargs):
    """Einstein summation of ``operands`` as ``subscripts`` says."""
    return run("einsum", fw.einsum, *operands, subscripts=subscripts)


@keras_op("correlate")
def correlate(x1, x2, mode="valid"):
    """The cross-correlation of two 1-D tensors."""
    return run("correlate", fw.with_params(jnp.correlate), x1, x2, mode=mode)


# ----------------------------------------------------------------------------- reductions


def _reduction(name, forward, doc, extra=()):
    def op(x, axis=None, keepdims=False):
        return run(name, forward, x, axis=as_axis(axis), keepdims=keepdims, **dict(extra))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return keras_op(name)(op)


for _name in ("all", "any", "amax", "amin", "sum", "ptp", "nanmax", "nanmin", "nansum", "nanprod", "nanmean",
              "nanmedian", "nanstd", "nanvar", "nanargmax", "nanargmin"):
    globals()[_name] = _reduction(_name, fw.with_params(getattr(jnp, _name)),
                                  f"``{_name}`` of ``x`` over ``axis`` (all axes when None).")
del _name
mean = _reduction("mean", fw.mean, "The mean of ``x`` over ``axis`` (integers give float32; float16 and "
                  "bfloat16 accumulate in float32).")
argmax = _reduction("argmax", fw.argmax, "The index of the largest element along ``axis`` (flattened when None).")
argmin = _reduction("argmin", fw.argmin, "The index of the smallest element along ``axis`` (flattened when None).")


@keras_op("var")
def var(x, axis=None, keepdims=False):
    """The variance of ``x`` over ``axis`` (accumulated in float32 at least)."""
    return run("var", fw.var, x, axis=as_axis(axis), keepdims=keepdims, floatx=floatx())


@keras_op("std")
def std(x, axis=None, keepdims=False):
    """The standard deviation of ``x`` over ``axis``."""
    return run("std", _STD, x, axis=as_axis(axis), keepdims=keepdims, floatx=floatx())


@keras_op("median")
def median(x, axis=None, keepdims=False):
    """The median of ``x`` over ``axis``."""
    return run("median", fw.median, x, axis=as_axis(axis), keepdims=keepdims, floatx=floatx())


@keras_op("max")
def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """The largest element of ``x`` over ``axis`` (``initial``: a lower bound)."""
    return run("max", fw.with_params(jnp.max), x, axis=as_axis(axis), keepdims=keepdims, initial=initial)


@keras_op("min")
def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """The smallest element of ``x`` over ``axis`` (``initial``: an upper bound)."""
    return run("min", fw.with_params(jnp.min), x, axis=as_axis(axis), keepdims=keepdims, initial=initial)


@keras_op("prod")
def prod(x, axis=None, keepdims=False, dtype=None):
    """The product of ``x`` over ``axis``."""
    return run("prod", fw.with_params(jnp.prod), x, axis=as_axis(axis), keepdims=keepdims, dtype=dtype)


@keras_op("count_nonzero")
def count_nonzero(x, axis=None):
    """How many elements of ``x`` are not zero, over ``axis`` (int32)."""
    return run("count_nonzero", fw.count_nonzero, x, axis=as_axis(axis))


@keras_op("average")
def average(x, axis=None, weights=None):
    """The (weighted) average of ``x`` along ``axis``."""
    extra = () if weights is None else (weights,)
    return run("average", fw.average, x, *extra, axis=axis, floatx=floatx())


def _cumulative(name):
    forward = fw.with_params(getattr(jnp, name))

    def op(x, axis=None, dtype=None):
        return run(name, forward, x, axis=axis, dtype=dtype)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}`` of ``x`` along ``axis`` (flattened when None)."
    return keras_op(name)(op)


cumsum, cumprod, nancumsum, nancumprod = (_cumulative(n) for n in ("cumsum", "cumprod", "nancumsum", "nancumprod"))


def _quantile(name, jnp_fn, int64_cast):
    forward = fw.quantile if int64_cast else fw.with_params(jnp_fn)

    def op(x, q, axis=None, method="linear", keepdims=False):
        params = dict(axis=as_axis(axis), method=method, keepdims=keepdims)
        if int64_cast:
            params["floatx"] = floatx()
        return run(name, forward, x, q, **params)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"The ``q``-th {name.replace('nan', '')} of ``x`` along ``axis``" + \
        (" (NaNs ignored)." if name.startswith("nan") else ".")
    return keras_op(name)(op)


quantile = _quantile("quantile", jnp.quantile, True)
percentile = _quantile("percentile", jnp.percentile, False)
nanquantile = _quantile("nanquantile", jnp.nanquantile, False)
nanpercentile = _quantile("nanpercentile", jnp.nanpercentile, False)


@keras_op("trace")
def trace(x, offset=0, axis1=0, axis2=1):
    """The sum along the diagonal ``offset`` of the plane ``(axis1, axis2)``."""
    return run("trace", fw.with_params(jnp.trace), x, offset=offset, axis1=axis1, axis2=axis2)


# ----------------------------------------------------------------------------- shapes and arrangement


@keras_op("reshape")
def reshape(x, newshape):
    """``x`` with shape ``newshape`` (one -1 allowed)."""
    return run("reshape", fw.with_params(jnp.reshape), x, shape=tuple(newshape) if isinstance(newshape, list)
               else newshape)


@keras_op("broadcast_to")
def broadcast_to(x, shape):
    """``x`` broadcast to ``shape``."""
    return run("broadcast_to", fw.with_params(jnp.broadcast_to), x, shape=tuple(shape))


@keras_op("expand_dims")
def expand_dims(x, axis):
    """``x`` with a size-1 axis inserted at ``axis`` (an int or a tuple)."""
    return run("expand_dims", fw.with_params(jnp.expand_dims), x, axis=as_axis(axis))


@keras_op("squeeze")
def squeeze(x, axis=None):
    """``x`` without its size-1 axes (those of ``axis``)."""
    return run("squeeze", fw.with_params(jnp.squeeze), x, axis=as_axis(axis))


@keras_op("transpose")
def transpose(x, axes=None):
    """``x`` with its axes permuted (reversed when None)."""
    return run("transpose", fw.with_params(jnp.transpose), x, axes=as_axis(axes))


@keras_op("swapaxes")
def swapaxes(x, axis1, axis2):
    """``x`` with ``axis1`` and ``axis2`` interchanged."""
    return run("swapaxes", fw.with_params(jnp.swapaxes), x, axis1=axis1, axis2=axis2)


@keras_op("moveaxis")
def moveaxis(x, source, destination):
    """``x`` with the axes ``source`` moved to ``destination``."""
    return run("moveaxis", fw.with_params(jnp.moveaxis), x, source=as_axis(source),
               destination=as_axis(destination))


@keras_op("flip")
def flip(x, axis=None):
    """``x`` reversed along ``axis`` (all when None)."""
    return run("flip", fw.with_params(jnp.flip), x, axis=as_axis(axis))


@keras_op("roll")
def roll(x, shift, axis=None):
    """``x`` rolled by ``shift`` along ``axis`` (flattened when None)."""
    return run("roll", fw.with_params(jnp.roll), x, shift=as_axis(shift), axis=as_axis(axis))


@keras_op("rot90")
def rot90(array, k=1, axes=(0, 1)):
    """``array`` rotated by ``k`` quarter turns in the plane ``axes``."""
    ndim_ = len(np.shape(array)) if not isinstance(array, (Tensor, Variable)) else len(array.shape)
    if ndim_ < 2:
        raise ValueError(f"Input array must have at least 2 dimensions. Received: array.ndim={ndim_}")
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"Invalid axes: {axes}. Axes must be a tuple of two different dimensions.")
    return run("rot90", fw.with_params(jnp.rot90), array, k=k, axes=tuple(axes))


@keras_op("tile")
def tile(x, repeats):
    """``x`` repeated ``repeats`` times along each axis."""
    return run("tile", fw.with_params(jnp.tile), x, reps=as_axis(repeats))


@keras_op("repeat")
def repeat(x, repeats, axis=None):
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (flattened when None)."""
    if not isinstance(repeats, int):
        repeats = tuple(int(r) for r in np.asarray(value(repeats)).reshape(-1))
        repeats = repeats[0] if len(repeats) == 1 else np.asarray(repeats)
        if isinstance(repeats, np.ndarray):
            total = int(repeats.sum())
            return run("repeat", fw.with_params(jnp.repeat), x, jnp.asarray(repeats), axis=axis,
                       total_repeat_length=total)
    return run("repeat", fw.with_params(jnp.repeat), x, repeats=repeats, axis=axis)


def _sequence_op(name, jnp_fn, doc, list_out=False):
    forward = fw.sequence(jnp_fn) if not list_out else fw.tuple_out(fw.sequence(jnp_fn))

    def op(xs, axis=0):
        return run(name, forward, *xs, axis=axis)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return keras_op(name)(op)


concatenate = _sequence_op("concatenate", jnp.concatenate, "The tensors ``xs`` joined along ``axis``.")


@keras_op("stack")
def stack(x, axis=0):
    """The tensors ``x`` stacked along a new axis ``axis``."""
    return run("stack", _STACK, *x, axis=axis)


_HSTACK, _VSTACK, _DSTACK = fw.sequence(jnp.hstack), fw.sequence(jnp.vstack), fw.sequence(jnp.dstack)


@keras_op("hstack")
def hstack(xs):
    """The tensors ``xs`` joined column-wise."""
    return run("hstack", _HSTACK, *xs)


@keras_op("vstack")
def vstack(xs):
    """The tensors ``xs`` joined row-wise."""
    return run("vstack", _VSTACK, *xs)


@keras_op("dstack")
def dstack(xs):
    """The tensors ``xs`` joined along the third axis."""
    return run("dstack", _DSTACK, *xs)


def _splitter(name, jnp_fn, with_axis):
    forward = fw.tuple_out(fw.with_params(jnp_fn))

    def split_op(x, indices_or_sections, axis=0):
        return to_list(run(name, forward, x, indices_or_sections=as_axis(indices_or_sections), axis=axis))

    def split_fixed(x, indices_or_sections):
        return to_list(run(name, forward, x, indices_or_sections=as_axis(indices_or_sections)))
    op = split_op if with_axis else split_fixed
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``x`` split into a list of tensors ({name}; sections or split indices)."
    return keras_op(name)(op)


split = _splitter("split", jnp.split, True)
array_split = _splitter("array_split", jnp.array_split, True)
hsplit = _splitter("hsplit", jnp.hsplit, False)
vsplit = _splitter("vsplit", jnp.vsplit, False)
dsplit = _splitter("dsplit", jnp.dsplit, False)


@keras_op("diag")
def diag(x, k=0):
    """The ``k``-th diagonal of a matrix, or a matrix with the vector ``x`` on it."""
    return run("diag", fw.with_params(jnp.diag), x, k=k)


@keras_op("diagflat")
def diagflat(x, k=0):
    """A matrix with the flattened ``x`` on its ``k``-th diagonal."""
    return run("diagflat", fw.with_params(jnp.diagflat), x, k=k)


@keras_op("diagonal")
def diagonal(x, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of the plane ``(axis1, axis2)`` (last axis of the result)."""
    return run("diagonal", fw.with_params(jnp.diagonal), x, offset=offset, axis1=axis1, axis2=axis2)


@keras_op("tril")
def tril(x, k=0):
    """``x`` with the elements above the ``k``-th diagonal zeroed."""
    return run("tril", fw.with_params(jnp.tril), x, k=k)


@keras_op("triu")
def triu(x, k=0):
    """``x`` with the elements below the ``k``-th diagonal zeroed."""
    return run("triu", fw.with_params(jnp.triu), x, k=k)


@keras_op("diff")
def diff(a, n=1, axis=-1):
    """The ``n``-th discrete difference of ``a`` along ``axis``."""
    return run("diff", fw.with_params(jnp.diff), a, n=n, axis=axis)


@keras_op("pad")
def pad(x, pad_width, mode="constant", constant_values=None):
    """``x`` padded by ``pad_width`` (``mode``: constant, reflect, symmetric, edge, ...)."""
    extra = ()
    if constant_values is not None:
        if mode != "constant":
            raise ValueError("Argument `constant_values` can only be provided when `mode == 'constant'`. "
                             f"Received: mode={mode}")
        extra = (constant_values,)
    width = np.asarray(pad_width).tolist()
    width = tuple(tuple(w) if isinstance(w, list) else w for w in width) if isinstance(width, list) else width
    return run("pad", fw.pad, x, *extra, pad_width=width, mode=mode)


@keras_op("take")
def take(x, indices, axis=None):
    """Elements of ``x`` at ``indices`` along ``axis`` (flattened when None)."""
    return run("take", fw.with_params(jnp.take), x, indices, axis=axis)


@keras_op("take_along_axis")
def take_along_axis(x, indices, axis=None):
    """Elements of ``x`` at ``indices`` matched along ``axis``."""
    return run("take_along_axis", fw.with_params(jnp.take_along_axis), x, indices, axis=axis)


@keras_op("sort")
def sort(x, axis=-1):
    """``x`` sorted along ``axis``."""
    return run("sort", fw.with_params(jnp.sort), x, axis=axis)


@keras_op("argsort")
def argsort(x, axis=-1):
    """The indices that sort ``x`` along ``axis``."""
    x = keras_input(x)
    return run("argsort", fw.with_params(jnp.argsort), x, axis=None if len(x.shape) == 0 else axis)


def _argpartition(x, *, kth, axis):
    if axis is None:
        return jnp.argpartition(x.reshape(-1), kth, axis=0)
    return jnp.argpartition(x, kth, axis=axis)


@keras_op("argpartition")
def argpartition(x, kth, axis=-1):
    """Indices that partition ``x`` around its ``kth`` element along ``axis``."""
    return run("argpartition", _argpartition, x, kth=kth, axis=axis)


@keras_op("searchsorted")
def searchsorted(sorted_sequence, values, side="left"):
    """Where ``values`` would be inserted in the 1-D ``sorted_sequence`` to keep it sorted."""
    sorted_sequence = keras_input(sorted_sequence)
    if len(sorted_sequence.shape) != 1:
        raise ValueError("`searchsorted` only supports 1-D sorted sequences. You can use "
                         "`keras.ops.vectorized_map` to extend it to N-D sequences. Received: "
                         f"sorted_sequence.shape={tuple(sorted_sequence.shape)}")
    return run("searchsorted", fw.with_params(jnp.searchsorted), sorted_sequence, values, side=side)


@keras_op("where")
def where(condition, x1=None, x2=None):
    """``x1`` where ``condition`` holds, else ``x2``; with neither, ``nonzero(condition)``."""
    if x1 is None and x2 is None:
        return nonzero(condition)
    if x1 is None or x2 is None:
        raise ValueError("keras.ops.where: give both `x1` and `x2`, or neither")
    return run("where", fw.where, condition, x1, x2)


@keras_op("select")
def select(condlist, choicelist, default=0):
    """The element of the first ``choicelist`` entry whose ``condlist`` entry holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist and choicelist must have the same length. Received: "
                         f"len(condlist)={len(condlist)}, len(choicelist)={len(choicelist)}")
    return run("select", fw.select, *condlist, *choicelist, default, n=len(condlist))


@keras_op("meshgrid")
def meshgrid(*x, indexing="xy"):
    """Coordinate matrices from the 1-D coordinate vectors ``x`` (a list)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for `indexing` are 'xy' and 'ij'. Received: indexing={indexing}")
    return to_list(run("meshgrid", _MESHGRID, *x, indexing=indexing))


@keras_op("trapezoid")
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule."""
    extra = () if x is None else (x,)
    return run("trapezoid", fw.trapezoid, y, *extra, dx=dx, axis=axis)


@keras_op("vander")
def vander(x, N=None, increasing=False):  # noqa: N803 (Keras's name)
    """The Vandermonde matrix of the 1-D ``x``."""
    return run("vander", fw.with_params(jnp.vander), x, N=N, increasing=increasing)


@keras_op("unravel_index")
def unravel_index(indices, shape):
    """Flat ``indices`` as a tuple of coordinate tensors in ``shape``."""
    return run("unravel_index", _UNRAVEL_INDEX, indices, shape=tuple(shape))


@keras_op("slogdet")
def slogdet(x):
    """The sign and the log of the absolute determinant of ``x`` (a tuple)."""
    return run("slogdet", _SLOGDET, x)


@keras_op("view")
def view(x, dtype=None):
    """``x``'s bytes seen as ``dtype``."""
    return run("view", fw.view, x, dtype=dtype)


# ----------------------------------------------------------------------------- values known eagerly


def nonzero(x):
    """The indices of the non-zero elements of ``x``: a tuple, one tensor per axis."""
    return tuple(Tensor(a) for a in jnp.nonzero(value(x)))


def unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False, axis=None,  # noqa: A002
           size=None, fill_value=None):
    """The unique elements of ``x`` (and, as asked, their first indices, the inverse and counts)."""
    out = jnp.unique(value(x), return_index=return_index, return_inverse=return_inverse,
                     return_counts=return_counts, axis=axis, equal_nan=False, size=size, sorted=sorted,
                     fill_value=fill_value)
    if isinstance(out, tuple):
        return tuple(Tensor(a) for a in out)
    return Tensor(out)


@keras_op("bincount")
def bincount(x, weights=None, minlength=0, sparse=False):
    """How often each non-negative integer occurs in ``x`` (weighted), at least ``minlength`` bins;
    a 2-D ``x`` counts per row."""
    if sparse:
        raise ValueError("keras.ops.bincount: sparse=True is not supported by minikeras (no sparse tensors)")
    counts = np.asarray(value(x))
    length = builtins.max(int(counts.max()) + 1 if counts.size else 0, minlength)
    extra = () if weights is None else (weights,)
    return run("bincount", fw.bincount, x, *extra, length=length)


@keras_op("histogram")
def histogram(x, bins=10, range=None):  # noqa: A002
    """The histogram of the 1-D ``x``: counts and bin edges."""
    shape = tuple(keras_input(x).shape)
    if len(shape) != 1:
        raise ValueError(f"Input tensor must be 1-dimensional. Received: input.shape={shape}")
    if not isinstance(bins, int) or bins <= 0:
        raise ValueError(f"Argument `bins` should be a non-negative integer. Received: bins={bins}")
    if range is not None:
        range = tuple(range)
    return run("histogram", _HISTOGRAM, x, bins=bins, range=range)


def get_item(x, key):
    """``x[key]`` (Tensors, slices, ``None``, ``...`` and int lists in ``key``)."""
    if isinstance(x, (Tensor, Variable)) or is_symbolic(x):
        return x[key]
    return Tensor(keras_input(x))[key]


def size(x):
    """How many elements ``x`` has (an int)."""
    return int(math.prod(keras_input(x).shape))


def ndim(x):
    """How many axes ``x`` has (an int)."""
    return len(keras_input(x).shape)


def vectorize(pyfunc, *, excluded=None, signature=None):
    """``pyfunc`` made to map over leading axes (``jnp.vectorize``); ``pyfunc`` takes and returns
    tensors. The result is one recorded op whose gradient is the vectorized function's vjp."""
    from minikeras import _context  # noqa: PLC0415 (no cycle: only the recording scope)

    def on_arrays(*arrays):
        with _context.recording_with(()):
            out = pyfunc(*[Tensor(a) for a in arrays])
        return jax.tree_util.tree_map(lambda t: t._value if isinstance(t, Tensor) else t, out,
                                      is_leaf=lambda t: isinstance(t, Tensor))

    mapped = jnp.vectorize(on_arrays, excluded=excluded or set(), signature=signature)

    def vectorized(*args):
        return run("vectorize", fw.with_params(mapped), *args)
    return vectorized


# ----------------------------------------------------------------------------- creation


def _dtype(dtype):
    return floatx() if dtype is None else dtype


def _made(array):
    return Tensor(array)


def zeros(shape, dtype=None):
    """A tensor of zeros of ``shape`` (floatx unless ``dtype``)."""
    return _made(jnp.zeros(shape, dtype=_dtype(dtype)))


def ones(shape, dtype=None):
    """A tensor of ones of ``shape`` (floatx unless ``dtype``)."""
    return _made(jnp.ones(shape, dtype=_dtype(dtype)))


def empty(shape, dtype=None):
    """An uninitialised tensor of ``shape`` (zeros here)."""
    return _made(jnp.empty(shape, dtype=_dtype(dtype)))


def full(shape, fill_value, dtype=None):
    """A tensor of ``shape`` filled with ``fill_value``."""
    return _made(jnp.full(shape, value(fill_value), dtype=_dtype(dtype)))


def _like(name, jnp_fn):
    forward = fw.with_params(jnp_fn)

    def op(x, dtype=None):
        return run(name, forward, x, dtype=dtype)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}``: a tensor of ``x``'s shape (and dtype unless ``dtype``)."
    return keras_op(name)(op)


zeros_like = _like("zeros_like", jnp.zeros_like)
ones_like = _like("ones_like", jnp.ones_like)
empty_like = _like("empty_like", jnp.empty_like)


def _full_like(x, fill, *, dtype):
    return jnp.full_like(x, fill, dtype=dtype)


@keras_op("full_like")
def full_like(x, fill_value, dtype=None):
    """A tensor of ``x``'s shape filled with ``fill_value``."""
    return run("full_like", _full_like, x, fill_value, dtype=dtype, constant=(0,))


def identity(n, dtype=None):
    """The ``n`` x ``n`` identity matrix."""
    return _made(jnp.identity(n, dtype=_dtype(dtype)))


def eye(N, M=None, k=0, dtype=None):  # noqa: N803
    """An ``N`` x ``M`` matrix with ones on the ``k``-th diagonal."""
    return _made(jnp.eye(N, M=M, k=k, dtype=_dtype(dtype)))


def tri(N, M=None, k=0, dtype=None):  # noqa: N803
    """An ``N`` x ``M`` matrix with ones at and below the ``k``-th diagonal."""
    return _made(jnp.tri(N, M=M, k=k, dtype=_dtype(dtype)))


def _python_dtype(x):
    if hasattr(x, "dtype"):
        return jnp.dtype(x.dtype)
    return {bool: jnp.dtype("bool"), int: jnp.dtype("int32"), float: jnp.dtype(floatx())}.get(type(x),
                                                                                          jnp.dtype(floatx()))


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``; the dtype from the arguments (int32 for ints,
    floatx for floats) unless ``dtype``."""
    if dtype is None:
        found = [_python_dtype(v) for v in (start, stop, step) if v is not None]
        dtype = found[0]
        for d in found[1:]:
            dtype = jnp.promote_types(dtype, d)
    start, stop, step = (None if v is None else np.asarray(value(v)).item() for v in (start, stop, step))
    return _made(jnp.arange(start, stop, step=step, dtype=dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (and the step, with ``retstep``)."""
    out = jnp.linspace(value(start), value(stop), num=num, endpoint=endpoint, retstep=retstep, dtype=dtype,
                       axis=axis)
    return (_made(out[0]), _made(out[1])) if retstep else _made(out)


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    """``num`` values evenly spaced on a log scale from ``base ** start`` to ``base ** stop``."""
    return _made(jnp.logspace(value(start), value(stop), num=num, endpoint=endpoint, base=base, dtype=dtype,
                              axis=axis))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values in geometric progression from ``start`` to ``stop``."""
    return _made(jnp.geomspace(value(start), value(stop), num=num, endpoint=endpoint, dtype=dtype, axis=axis))


def array(x, dtype=None):
    """``x`` as a tensor (of ``dtype``)."""
    return _made(jnp.array(value(x), dtype=dtype))


def _window(name, jnp_fn):
    forward = fw.window(jnp_fn)

    def op(x):
        return run(name, forward, length=int(np.asarray(value(x))), floatx=floatx())
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"The {name} window of ``x`` points (floatx)."
    return op


bartlett = _window("bartlett", jnp.bartlett)
blackman = _window("blackman", jnp.blackman)
hamming = _window("hamming", jnp.hamming)
hanning = _window("hanning", jnp.hanning)


def kaiser(x, beta):
    """The Kaiser window of ``x`` points with shape parameter ``beta`` (floatx)."""
    return run("kaiser", _KAISER, length=int(np.asarray(value(x))), beta=float(beta), floatx=floatx())


__all__ = sorted(_n for _n, _v in list(globals().items())
                 if not _n.startswith("_") and callable(_v) and not isinstance(_v, type)
                 and _n not in ("as_axis", "define", "keras_input", "run", "to_list", "value", "is_symbolic",
                                "keras_op", "floatx"))

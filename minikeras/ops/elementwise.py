"""Elementwise ops whose gradients need no sum over broadcast axes: unary functions, comparisons
and ``cast``. Reductions (reduce.py) are written with these; binary arithmetic (math.py), whose
gradients go through ``unbroadcast``, stands above both.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.dtypes import is_floating, requested_dtype
from minikeras.ops.convert import binary_args, dtype_of
from minikeras.ops.primitive import Primitive
from minikeras.tensor import Tensor
from minikeras.xla_cpu import low_precision


# -- unary functions ---------------------------------------------------------------------
def _unary(name, forward, rule):
    prim = Primitive(name, forward)
    prim.defgrad(rule)

    def op(x, name=None):
        return prim(x)

    op.__name__ = name
    op.__doc__ = f"Elementwise {name}."
    op.primitive = prim
    return op


negative = _unary("negative", jnp.negative, lambda g, out, x: -g)
abs = _unary("abs", jnp.abs, lambda g, out, x: g * sign(x))  # noqa: A001
square = _unary("square", jnp.square, lambda g, out, x: g * 2.0 * x)
sqrt = _unary("sqrt", jnp.sqrt, lambda g, out, x: g * 0.5 / out)
rsqrt = _unary("rsqrt", jax.lax.rsqrt, lambda g, out, x: g * -0.5 * out * out * out)
exp = _unary("exp", jnp.exp, lambda g, out, x: g * out)
expm1 = _unary("expm1", jnp.expm1, lambda g, out, x: g * (out + 1.0))
log = _unary("log", jnp.log, lambda g, out, x: g / x)
log1p = _unary("log1p", jnp.log1p, lambda g, out, x: g / (x + 1.0))
sin = _unary("sin", jnp.sin, lambda g, out, x: g * cos(x))
cos = _unary("cos", jnp.cos, lambda g, out, x: -g * sin(x))
tan = _unary("tan", jnp.tan, lambda g, out, x: g * (1.0 + out * out))
sinh = _unary("sinh", jnp.sinh, lambda g, out, x: g * cosh(x))
cosh = _unary("cosh", jnp.cosh, lambda g, out, x: g * sinh(x))
asin = _unary("asin", jnp.arcsin, lambda g, out, x: g * rsqrt(1.0 - x * x))
acos = _unary("acos", jnp.arccos, lambda g, out, x: -g * rsqrt(1.0 - x * x))
atan = _unary("atan", jnp.arctan, lambda g, out, x: g / (1.0 + x * x))
tanh = _unary("tanh", jnp.tanh, lambda g, out, x: g * (1.0 - out * out))
sigmoid = _unary("sigmoid", jax.nn.sigmoid, lambda g, out, x: g * out * (1.0 - out))
softplus = _unary("softplus", jax.nn.softplus, lambda g, out, x: g * sigmoid(x))
reciprocal = _unary("reciprocal", jnp.reciprocal, lambda g, out, x: -g * out * out)
erf = _unary("erf", jax.scipy.special.erf,
             lambda g, out, x: g * (2.0 / math.sqrt(math.pi)) * exp(-(x * x)))
log_sigmoid = _unary("log_sigmoid", jax.nn.log_sigmoid, lambda g, out, x: g * sigmoid(-x))


def _nondiff(name, forward):
    prim = Primitive(name, forward, differentiable=False)

    def op(*args, name=None):
        return prim(*args)

    op.__name__ = name
    op.__doc__ = f"Elementwise {name} (not differentiable: its gradient is None)."
    op.primitive = prim
    return op


sign = _nondiff("sign", jnp.sign)
floor = _nondiff("floor", jnp.floor)
ceil = _nondiff("ceil", jnp.ceil)
round = _nondiff("round", jnp.round)  # noqa: A001 - half to even, as tf.round
is_nan = _nondiff("is_nan", jnp.isnan)
is_inf = _nondiff("is_inf", jnp.isinf)
is_finite = _nondiff("is_finite", jnp.isfinite)
logical_not = _nondiff("logical_not", jnp.logical_not)


def _comparison(name, tf_name, forward):
    prim = Primitive(name, forward, differentiable=False)

    def op(x, y, name=None):
        return prim(*binary_args(tf_name, x, y))

    op.__name__ = name
    op.__doc__ = f"Elementwise {name}, a bool tensor (not differentiable)."
    return op


equal = _comparison("equal", "Equal", jnp.equal)
not_equal = _comparison("not_equal", "NotEqual", jnp.not_equal)
less = _comparison("less", "Less", jnp.less)
less_equal = _comparison("less_equal", "LessEqual", jnp.less_equal)
greater = _comparison("greater", "Greater", jnp.greater)
greater_equal = _comparison("greater_equal", "GreaterEqual", jnp.greater_equal)
logical_and = _comparison("logical_and", "LogicalAnd", jnp.logical_and)
logical_or = _comparison("logical_or", "LogicalOr", jnp.logical_or)
logical_xor = _comparison("logical_xor", "LogicalXor", jnp.logical_xor)
floordiv = _comparison("floordiv", "FloorDiv", jnp.floor_divide)
floormod = _comparison("floormod", "FloorMod", jnp.mod)
mod = floormod


# -- casting --------------------------------------------------------------------------
# low_precision.astype: a bfloat16 product whose kernel also wrote it widened gives that array
_cast = Primitive("cast", lambda x, *, dtype: low_precision.astype(x, dtype))
# names whose dtype is held as it is named (a 64-bit one only matches a Tensor that is 64-bit)
_DTYPE_NAMED = {name: np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")}


@_cast.defgrad
def _(g, out, x, *, dtype):
    if x.dtype.kind != "c" and not is_floating(x.dtype):  # bfloat16 is NumPy kind 'V'
        return (None,)
    return cast(g, x.dtype)


def cast(x, dtype, name=None):
    """Converts ``x`` to ``dtype``; casting to an integer type cuts the gradient (it is None)."""
    named = _DTYPE_NAMED.get(dtype) if type(dtype) is str else None
    if named is not None and type(x) is Tensor and x._value.dtype == named:
        return x  # already the dtype named: no dtype conversions (a generator loop's cast)
    dtype = requested_dtype(dtype)
    if dtype_of(x) == dtype and isinstance(x, Tensor):
        return x
    return _cast(x, dtype=dtype)

"""Elementwise math: arithmetic, unary functions, comparisons. Each op's forward and gradient
rule stand together; broadcasting gradients go through the one ``unbroadcast`` helper."""
import math

import jax
import jax.numpy as jnp

from minikeras.ops.convert import binary_args, dtype_of
from minikeras.ops.primitive import Primitive
from minikeras.tensor import Tensor, to_array


def unbroadcast(g, shape):
    """Sums ``g`` over the axes that broadcasting added or stretched, so it has ``shape``."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    from minikeras.ops.reduce import reduce_sum
    from minikeras.ops.array import reshape
    extra = g.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and g.shape[extra + i] != 1)
    if axes:
        g = reduce_sum(g, axis=axes)
    return reshape(g, shape) if g.shape != shape else g


# -- binary arithmetic ------------------------------------------------------------------
_add = Primitive("add", lambda x, y: x + y)
_subtract = Primitive("subtract", lambda x, y: x - y)
_multiply = Primitive("multiply", lambda x, y: x * y)
_divide = Primitive("divide", lambda x, y: x / y)
_pow = Primitive("pow", lambda x, y: jnp.power(x, y))
_maximum = Primitive("maximum", jnp.maximum)
_minimum = Primitive("minimum", jnp.minimum)
_squared_difference = Primitive("squared_difference", lambda x, y: jnp.square(x - y))


@_add.defgrad
def _(g, out, x, y):
    return unbroadcast(g, x.shape), unbroadcast(g, y.shape)


@_subtract.defgrad
def _(g, out, x, y):
    return unbroadcast(g, x.shape), unbroadcast(-g, y.shape)


@_multiply.defgrad
def _(g, out, x, y):
    return unbroadcast(g * y, x.shape), unbroadcast(g * x, y.shape)


@_divide.defgrad
def _(g, out, x, y):
    gx = g / y
    return unbroadcast(gx, x.shape), unbroadcast(-gx * out, y.shape)


@_pow.defgrad
def _(g, out, x, y):
    gx = g * y * pow(x, y - 1.0) if x.dtype.kind == "f" else None
    gy = g * out * where(x > 0, log(where(x > 0, x, 1.0)), 0.0) if y.dtype.kind == "f" else None
    return (None if gx is None else unbroadcast(gx, x.shape)), (None if gy is None else unbroadcast(gy, y.shape))


@_maximum.defgrad
def _(g, out, x, y):
    x_wins = x >= y
    zeros = zeros_like_(g)
    return unbroadcast(where(x_wins, g, zeros), x.shape), unbroadcast(where(x_wins, zeros, g), y.shape)


@_minimum.defgrad
def _(g, out, x, y):
    x_wins = x <= y
    zeros = zeros_like_(g)
    return unbroadcast(where(x_wins, g, zeros), x.shape), unbroadcast(where(x_wins, zeros, g), y.shape)


@_squared_difference.defgrad
def _(g, out, x, y):
    d = g * 2.0 * (x - y)
    return unbroadcast(d, x.shape), unbroadcast(-d, y.shape)


def add(x, y, name=None):
    """x + y elementwise, with broadcasting."""
    return _add(*binary_args("Add", x, y))


def subtract(x, y, name=None):
    """x - y elementwise, with broadcasting."""
    return _subtract(*binary_args("Sub", x, y))


def multiply(x, y, name=None):
    """x * y elementwise, with broadcasting."""
    return _multiply(*binary_args("Mul", x, y))


def divide(x, y, name=None):
    """x / y elementwise; integer inputs give float results, as TensorFlow's ``truediv``."""
    x, y = binary_args("RealDiv", x, y)
    if x.dtype.kind in "iub":
        x, y = cast(x, "float32"), cast(y, "float32")
    return _divide(x, y)


truediv = divide


def pow(x, y, name=None):  # noqa: A001 - TensorFlow's name
    """x ** y elementwise."""
    return _pow(*binary_args("Pow", x, y))


def maximum(x, y, name=None):
    """Elementwise maximum (at ties the gradient goes to ``x``, as in TensorFlow)."""
    return _maximum(*binary_args("Maximum", x, y))


def minimum(x, y, name=None):
    """Elementwise minimum (at ties the gradient goes to ``x``, as in TensorFlow)."""
    return _minimum(*binary_args("Minimum", x, y))


def squared_difference(x, y, name=None):
    """(x - y) ** 2 elementwise."""
    return _squared_difference(*binary_args("SquaredDifference", x, y))


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


# -- selection and casting -----------------------------------------------------------------
_where = Primitive("where", jnp.where)


@_where.defgrad
def _(g, out, condition, x, y):
    zeros = zeros_like_(g)
    return None, unbroadcast(where(condition, g, zeros), x.shape), unbroadcast(where(condition, zeros, g), y.shape)


def where(condition, x=None, y=None, name=None):
    """Elementwise ``x if condition else y`` with broadcasting (``tf.where``).

    With only ``condition``, returns the indices of its true elements, shape [n, rank] (eager only).
    """
    if x is None and y is None:
        return Tensor(jnp.argwhere(to_array(condition)).astype(jnp.int64 if jax.config.jax_enable_x64 else jnp.int32))
    if x is None or y is None:
        raise ValueError("mk.where needs both x and y, or neither")
    x, y = binary_args("SelectV2", x, y)
    condition = Tensor(to_array(condition))
    if condition.dtype != jnp.bool_:
        raise TypeError(f"mk.where condition must be a bool tensor, received dtype {condition.dtype.name}")
    return _where(condition, x, y)


_cast = Primitive("cast", lambda x, *, dtype: x.astype(dtype))


@_cast.defgrad
def _(g, out, x, *, dtype):
    if x.dtype.kind not in "fc":
        return (None,)
    return cast(g, x.dtype)


def cast(x, dtype, name=None):
    """Converts ``x`` to ``dtype``; casting to an integer type cuts the gradient (it is None)."""
    from minikeras.dtypes import as_dtype
    dtype = as_dtype(dtype)
    if dtype_of(x) == dtype and isinstance(x, Tensor):
        return x
    return _cast(x, dtype=dtype)


def zeros_like_(x):
    """Zeros of x's shape and dtype, as a constant (no tape connection)."""
    return Tensor(jnp.zeros(x.shape, x.dtype))

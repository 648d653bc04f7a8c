"""Elementwise math: binary arithmetic and ``where``, whose gradients sum over broadcast axes
with ``unbroadcast`` (reduce.py). Unary functions, comparisons and ``cast`` need no such sum;
they stand below reductions in elementwise.py and are re-exported here under their ``mk.math`` names.
"""
import jax
import jax.numpy as jnp

from minikeras.ops.convert import binary_args
from minikeras.ops.elementwise import (  # noqa: F401 - re-exported
    abs,
    acos,
    asin,
    atan,
    cast,
    ceil,
    cos,
    cosh,
    equal,
    erf,
    exp,
    expm1,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    is_finite,
    is_inf,
    is_nan,
    less,
    less_equal,
    log,
    log1p,
    log_sigmoid,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    mod,
    negative,
    not_equal,
    reciprocal,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    softplus,
    sqrt,
    square,
    tan,
    tanh,
)
from minikeras.ops.primitive import Primitive
from minikeras.ops.reduce import unbroadcast
from minikeras.tensor import Tensor, to_array

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
    zeros = zero_of_(g)
    return unbroadcast(where(x_wins, g, zeros), x.shape), unbroadcast(where(x_wins, zeros, g), y.shape)


@_minimum.defgrad
def _(g, out, x, y):
    x_wins = x <= y
    zeros = zero_of_(g)
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


# -- selection ------------------------------------------------------------------------
_where = Primitive("where", jnp.where)


@_where.defgrad
def _(g, out, condition, x, y):
    zeros = zero_of_(g)
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


def zeros_like_(x):
    """Zeros of x's shape and dtype, as a constant (no tape connection)."""
    return Tensor(jnp.zeros(x.shape, x.dtype))


def zero_of_(x):
    """A scalar zero of x's dtype, as a constant (no tape connection), for ``where`` to broadcast.

    Gradient rules use it rather than ``zeros_like_``: inside ``mk.function``'s trace constants are
    computed eagerly, and a full-size zeros would compile a program for every shape."""
    return Tensor(jnp.zeros((), x.dtype))

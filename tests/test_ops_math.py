"""Elementwise math, reductions, matmul, norms and clipping: forward values against NumPy,
first- and second-order gradients against JAX (see conftest.check_grad), None gradients
through non-differentiable ops, and the errors users get for bad input."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special
from conftest import assert_close, check_grad, gradient_of, rand

import minikeras as mk

SHAPE = (3, 4)


def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


def _erf(xp, x):
    return scipy.special.erf(x) if xp is np else jax.scipy.special.erf(x)


# name, mk op, reference written for either numpy or jax.numpy, input range (None: normal)
UNARY = [
    ("negative", mk.negative, lambda xp, x: -x, None),
    ("abs", mk.abs, lambda xp, x: xp.abs(x), None),
    ("square", mk.square, lambda xp, x: x * x, None),
    ("sqrt", mk.sqrt, lambda xp, x: xp.sqrt(x), (0.5, 2.0)),
    ("rsqrt", mk.math.rsqrt, lambda xp, x: 1 / xp.sqrt(x), (0.5, 2.0)),
    ("exp", mk.exp, lambda xp, x: xp.exp(x), None),
    ("expm1", mk.math.expm1, lambda xp, x: xp.expm1(x), None),
    ("log", mk.math.log, lambda xp, x: xp.log(x), (0.5, 2.0)),
    ("log1p", mk.math.log1p, lambda xp, x: xp.log1p(x), (-0.5, 2.0)),
    ("sin", mk.sin, lambda xp, x: xp.sin(x), None),
    ("cos", mk.cos, lambda xp, x: xp.cos(x), None),
    ("tan", mk.math.tan, lambda xp, x: xp.tan(x), (-1.0, 1.0)),
    ("sinh", mk.math.sinh, lambda xp, x: xp.sinh(x), None),
    ("cosh", mk.math.cosh, lambda xp, x: xp.cosh(x), None),
    ("asin", mk.math.asin, lambda xp, x: xp.arcsin(x), (-0.8, 0.8)),
    ("acos", mk.math.acos, lambda xp, x: xp.arccos(x), (-0.8, 0.8)),
    ("atan", mk.math.atan, lambda xp, x: xp.arctan(x), None),
    ("tanh", mk.tanh, lambda xp, x: xp.tanh(x), None),
    ("sigmoid", mk.sigmoid, _sigmoid, None),
    ("softplus", mk.math.softplus, lambda xp, x: xp.log1p(xp.exp(x)), None),
    ("log_sigmoid", mk.math.log_sigmoid, lambda xp, x: -xp.log1p(xp.exp(-x)), None),
    ("reciprocal", mk.math.reciprocal, lambda xp, x: 1 / x, (0.5, 2.0)),
    ("erf", mk.math.erf, _erf, None),
    ("relu", mk.nn.relu, lambda xp, x: xp.maximum(x, 0), None),
]


def _data(shape, domain, seed=0):
    return rand(*shape, seed=seed) if domain is None else rand(*shape, seed=seed, low=domain[0], high=domain[1])


@pytest.mark.parametrize("name, op, ref, domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, op, ref, domain):
    x = _data(SHAPE, domain)
    out = check_grad(op, lambda a: ref(jnp, a), x)
    assert_close(out, ref(np, x.astype(np.float64)), what=f"{name} vs numpy")


BINARY = [
    ("add", mk.add, lambda xp, x, y: x + y, None, None),
    ("subtract", mk.subtract, lambda xp, x, y: x - y, None, None),
    ("multiply", mk.multiply, lambda xp, x, y: x * y, None, None),
    ("divide", mk.divide, lambda xp, x, y: x / y, None, (0.5, 2.0)),
    ("pow", mk.pow, lambda xp, x, y: xp.power(x, y), (0.5, 2.0), None),
    ("maximum", mk.maximum, lambda xp, x, y: xp.maximum(x, y), None, None),
    ("minimum", mk.minimum, lambda xp, x, y: xp.minimum(x, y), None, None),
    ("squared_difference", mk.math.squared_difference, lambda xp, x, y: (x - y) ** 2, None, None),
]
# each op on one shape pattern (all patterns covered); add and multiply on two
SHAPE_PAIRS = [((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3, 4)), ((3, 4), (3, 1)), ((3, 4), (3, 4))]
BINARY_CASES = [(*op, SHAPE_PAIRS[i % 5]) for i, op in enumerate(BINARY)] + [
    (*BINARY[0], SHAPE_PAIRS[4]), (*BINARY[2], SHAPE_PAIRS[3])]


@pytest.mark.parametrize("name, op, ref, x_domain, y_domain, shapes", BINARY_CASES,
                         ids=[f"{c[0]}-{c[5][0]}-{c[5][1]}" for c in BINARY_CASES])
def test_binary(name, op, ref, x_domain, y_domain, shapes):
    x = _data(shapes[0], x_domain, seed=1)
    y = _data(shapes[1], y_domain, seed=2)
    out = check_grad(op, lambda a, b: ref(jnp, a, b), x, y)
    assert_close(out, ref(np, x.astype(np.float64), y.astype(np.float64)), what=f"{name} vs numpy")


def test_operators_and_python_scalars():
    x = rand(*SHAPE, seed=3, low=0.5, high=2.0)
    assert_close(mk.math.truediv(x, 2.0), x / 2.0)
    check_grad(lambda t: 2.0 * t - t / 3.0 + t ** 2.0 + 1.0 / t - (-t) + abs(t) + (4.0 - t) * t,
               lambda a: 2.0 * a - a / 3.0 + a ** 2.0 + 1.0 / a + a + jnp.abs(a) + (4.0 - a) * a, x)


def test_maximum_tie_goes_to_x_and_binary_grads_unbroadcast():
    gx, gy = gradient_of(lambda a, b: mk.maximum(a, b), np.array([1.0, 2.0], np.float32), np.float32(2.0))
    np.testing.assert_array_equal(gx, [0.0, 1.0])  # the tie at 2.0 goes to x, as in TensorFlow
    assert gy.shape == () and float(gy) == 1.0


# -- reductions -------------------------------------------------------------------------------------
REDUCTIONS = [
    ("reduce_sum", mk.reduce_sum, lambda xp, x, **k: xp.sum(x, **k)),
    ("reduce_mean", mk.reduce_mean, lambda xp, x, **k: xp.mean(x, **k)),
    ("reduce_max", mk.reduce_max, lambda xp, x, **k: xp.max(x, **k)),
    ("reduce_min", mk.reduce_min, lambda xp, x, **k: xp.min(x, **k)),
    ("reduce_prod", mk.reduce_prod, lambda xp, x, **k: xp.prod(x, **k)),
    ("reduce_logsumexp", mk.math.reduce_logsumexp,
     lambda xp, x, **k: (jax.nn.logsumexp if xp is jnp else scipy.special.logsumexp)(x, **k)),
    ("reduce_variance", mk.math.reduce_variance, lambda xp, x, **k: xp.var(x, **k)),
    ("reduce_std", mk.math.reduce_std, lambda xp, x, **k: xp.std(x, **k)),
]
AXES = [(None, False), (0, False), (-1, True), ((0, 2), False)]
# each reduction on one axis pattern; the sum also on a second
REDUCTION_CASES = [(*op, *AXES[i % 4]) for i, op in enumerate(REDUCTIONS)] + [(*REDUCTIONS[0], *AXES[2])]


@pytest.mark.parametrize("name, op, ref, axis, keepdims", REDUCTION_CASES,
                         ids=[f"{c[0]}-{c[3]}-{c[4]}" for c in REDUCTION_CASES])
def test_reduction(name, op, ref, axis, keepdims):
    x = rand(2, 3, 4, seed=4, low=0.5, high=1.5) if name == "reduce_prod" else rand(2, 3, 4, seed=4)
    out = check_grad(lambda t: op(t, axis=axis, keepdims=keepdims),
                     lambda a: ref(jnp, a, axis=axis, keepdims=keepdims), x)
    assert_close(out, ref(np, x.astype(np.float64), axis=axis, keepdims=keepdims), what=f"{name} vs numpy")


def test_reduce_max_shares_gradient_among_ties():
    (g,) = gradient_of(lambda t: mk.reduce_max(t), np.array([1.0, 3.0, 3.0], np.float32))
    np.testing.assert_allclose(g, [0.0, 0.5, 0.5])


# -- matmul, norms, clipping -----------------------------------------------------------------------
MATMULS = [
    ((3, 4), (4, 5), False, False),
    ((4, 3), (4, 5), True, False),
    ((2, 4, 3), (1, 5, 4), True, True),
    ((3, 4), (2, 5, 4), False, True),
]


@pytest.mark.parametrize("a_shape, b_shape, ta, tb", MATMULS, ids=str)
def test_matmul(a_shape, b_shape, ta, tb):
    a, b = rand(*a_shape, seed=5), rand(*b_shape, seed=6)

    def ref(xp, x, y):
        return xp.matmul(xp.swapaxes(x, -1, -2) if ta else x, xp.swapaxes(y, -1, -2) if tb else y)

    out = check_grad(lambda x, y: mk.matmul(x, y, transpose_a=ta, transpose_b=tb), lambda x, y: ref(jnp, x, y), a, b)
    assert_close(out, ref(np, a.astype(np.float64), b.astype(np.float64)), what="matmul vs numpy")
    if not (ta or tb):
        assert_close(mk.constant(a) @ mk.constant(b), out, what="@ operator")


def test_tensordot():
    a, b = rand(2, 3, 4, seed=7), rand(4, 3, 5, seed=8)
    out = check_grad(lambda x, y: mk.tensordot(x, y, [[1, 2], [1, 0]]),
                     lambda x, y: jnp.tensordot(x, y, [[1, 2], [1, 0]]), a, b)
    assert_close(out, np.tensordot(a, b, [[1, 2], [1, 0]]))


@pytest.mark.parametrize("ord_, axis", [("euclidean", 1), (np.inf, None)], ids=str)
def test_norm(ord_, axis):
    x = rand(*SHAPE, seed=9)
    np_ord = 2 if ord_ == "euclidean" else ord_
    if axis is None:
        def ref(a):
            return jnp.linalg.norm(a.reshape(-1), ord=np_ord)
        expected = np.linalg.norm(x.reshape(-1), ord=np_ord)
    else:
        def ref(a):
            return jnp.linalg.norm(a, ord=np_ord, axis=axis)
        expected = np.linalg.norm(x, ord=np_ord, axis=axis)
    out = check_grad(lambda t: mk.norm(t, ord=ord_, axis=axis), ref, x)
    assert_close(out, expected, what="norm vs numpy")


def test_norm_forward():
    x = rand(*SHAPE, seed=9)
    assert_close(mk.norm(x), np.linalg.norm(x.reshape(-1)))
    assert_close(mk.norm(x, ord=1, axis=0), np.linalg.norm(x, ord=1, axis=0))
    assert_close(mk.norm(x, axis=1, keepdims=True), np.linalg.norm(x, axis=1, keepdims=True))


def test_norm_gradient_at_zero_is_zero():
    (g,) = gradient_of(mk.norm, np.zeros(3, np.float32))
    np.testing.assert_array_equal(g, np.zeros(3))


def test_clip_by_value():
    x = rand(*SHAPE, seed=10)
    out = check_grad(lambda t: mk.clip_by_value(t, -0.5, 0.7), lambda a: jnp.clip(a, -0.5, 0.7), x)
    assert_close(out, np.clip(x, -0.5, 0.7))


def test_clip_by_norm():
    clip, axes = 1.0, [1]
    x = rand(*SHAPE, seed=11)

    def ref(xp, a):
        n = xp.sqrt(xp.sum(a * a, axis=None if axes is None else tuple(axes), keepdims=True))
        return a * clip / xp.maximum(n, clip)

    out = check_grad(lambda t: mk.clip_by_norm(t, clip, axes=axes), lambda a: ref(jnp, a), x)
    assert_close(out, ref(np, x.astype(np.float64)))
    assert_close(mk.clip_by_norm(x, 1.0), x / np.linalg.norm(x))
    assert_close(mk.clip_by_norm(x, 100.0), x)


def test_clip_by_global_norm():
    clip = 1.5
    a, b = rand(*SHAPE, seed=12), rand(5, seed=13)

    def mk_fn(x, y):
        (cx, cy), norm = mk.clip_by_global_norm([x, y], clip)
        return mk.concat([mk.reshape(cx, [-1]), cy, mk.reshape(norm, [1])], 0)

    def ref(xp, x, y):
        norm = xp.sqrt(xp.sum(x * x) + xp.sum(y * y))
        scale = clip / xp.maximum(norm, clip)
        return xp.concatenate([(x * scale).reshape(-1), y * scale, norm.reshape(1)])

    out = check_grad(mk_fn, lambda x, y: ref(jnp, x, y), a, b)
    assert_close(out, ref(np, a.astype(np.float64), b.astype(np.float64)))
    assert_close(mk.global_norm([a, b]), np.sqrt(np.sum(a.astype(np.float64) ** 2) + np.sum(b.astype(np.float64) ** 2)))
    clipped, norm = mk.clip_by_global_norm([a, None], 100.0)
    assert clipped[1] is None and float(norm) == pytest.approx(np.linalg.norm(a), rel=1e-5)
    np.testing.assert_allclose(clipped[0], a, rtol=1e-6)  # under the limit: unchanged


@pytest.mark.parametrize("cond_shape", [(3, 4), (3, 1)], ids=str)
def test_where(cond_shape):
    c = rand(*cond_shape, seed=14) > 0
    x, y = rand(*SHAPE, seed=15), rand(4, seed=16)
    out = check_grad(lambda a, b: mk.where(mk.constant(c), mk.sin(a), b * b),
                     lambda a, b: jnp.where(c, jnp.sin(a), b * b), x, y)
    assert_close(out, np.where(c, np.sin(x), y * y))


def test_cast_between_floats_keeps_the_gradient():
    x = rand(*SHAPE, seed=17)
    check_grad(lambda t: mk.cast(mk.sin(mk.cast(t, mk.float16)), mk.float32) * t,
               lambda a: jnp.sin(a.astype(jnp.float16)).astype(jnp.float32) * a, x, rtol=2e-3, atol=2e-3)


# -- non-differentiable ops: the gradient is None -----------------------------------------------------
NONDIFF = {
    "round": lambda t: mk.round(t),
    "sign": lambda t: mk.sign(t),
    "floor": lambda t: mk.math.floor(t),
    "ceil": lambda t: mk.math.ceil(t),
    "argmax": lambda t: mk.cast(mk.argmax(t, axis=1), mk.float32),
    "argmin": lambda t: mk.cast(mk.argmin(t), mk.float32),
    "cast_to_int": lambda t: mk.cast(mk.cast(t * 3.0, mk.int32), mk.float32),
    "greater": lambda t: mk.cast(mk.greater(t, 0.0), mk.float32),
    "less": lambda t: mk.cast(t < 0.5, mk.float32),
    "equal": lambda t: mk.cast(mk.equal(t, t), mk.float32),
    "not_equal": lambda t: mk.cast(mk.not_equal(t, 1.0), mk.float32),
    "greater_equal": lambda t: mk.cast(mk.math.greater_equal(t, 0.0), mk.float32),
    "less_equal": lambda t: mk.cast(mk.math.less_equal(t, 0.0), mk.float32),
    "is_finite": lambda t: mk.cast(mk.math.is_finite(t), mk.float32),
    "is_nan": lambda t: mk.cast(mk.math.is_nan(t), mk.float32),
    "logical_and": lambda t: mk.cast(mk.math.logical_and(t > 0.0, t < 1.0), mk.float32),
    "floordiv": lambda t: mk.math.floordiv(t, 0.7),
    "floormod": lambda t: mk.math.floormod(t, 0.7),
    "one_hot": lambda t: mk.one_hot(mk.cast(mk.abs(t), mk.int32), 3),
}


@pytest.mark.parametrize("name", sorted(NONDIFF))
def test_non_differentiable_gives_none(name):
    (g,) = gradient_of(NONDIFF[name], rand(*SHAPE, seed=18))
    assert g is None
    x = mk.constant(rand(*SHAPE, seed=18))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = NONDIFF[name](x)
    zero = tape.gradient(y, x, unconnected_gradients="zero")
    np.testing.assert_array_equal(zero, np.zeros(SHAPE))


def test_non_differentiable_forward_values():
    x = np.array([[-1.5, -0.5, 0.5, 2.5], [0.2, -3.7, 1.0, 0.0]], np.float32)
    np.testing.assert_array_equal(mk.round(x), np.round(x))  # half to even, like tf.round
    np.testing.assert_array_equal(mk.sign(x), np.sign(x))
    np.testing.assert_array_equal(mk.math.floor(x), np.floor(x))
    np.testing.assert_array_equal(mk.argmax(x, axis=1), np.argmax(x, axis=1))
    np.testing.assert_array_equal(mk.argmin(x), np.argmin(x, axis=0))
    np.testing.assert_array_equal(mk.equal(x, 0.5), x == 0.5)
    np.testing.assert_array_equal(mk.greater(x, 0.0), x > 0)
    np.testing.assert_allclose(mk.math.floordiv(x, 0.7), np.floor_divide(x, np.float32(0.7)))
    np.testing.assert_allclose(mk.math.floormod(x, 0.7), np.mod(x, np.float32(0.7)), atol=1e-6)
    np.testing.assert_array_equal(mk.reduce_any(x > 2, axis=1), np.any(x > 2, axis=1))
    np.testing.assert_array_equal(mk.reduce_all(x > -4), True)
    assert mk.argmax(x, axis=1).dtype == mk.int32


# -- errors ----------------------------------------------------------------------------------------------
def test_error_mismatched_dtypes():
    with pytest.raises(TypeError, match="expected to be a float32 tensor but is a int32"):
        mk.add(mk.constant([1.0]), mk.constant([1]))
    with pytest.raises(TypeError, match="Python float"):
        mk.multiply(mk.constant([1]), 2.5)


def test_error_matmul_shapes():
    with pytest.raises(ValueError, match=r"Matrix size-incompatible: In\[0\]: \[3,4\], In\[1\]: \[5,6\]"):
        mk.matmul(np.ones((3, 4), np.float32), np.ones((5, 6), np.float32))
    with pytest.raises(ValueError, match="rank >= 2"):
        mk.matmul(np.ones(3, np.float32), np.ones((3, 2), np.float32))


def test_error_bad_arguments():
    x = mk.constant(rand(*SHAPE))
    with pytest.raises(ValueError, match="axis 2 is out of range for a tensor of rank 2"):
        mk.reduce_sum(x, axis=2)
    with pytest.raises(TypeError, match="condition must be a bool tensor"):
        mk.where(x, x, x)
    with pytest.raises(TypeError, match="dtype"):
        mk.cast(x, "not_a_dtype")
    with pytest.raises(ValueError, match="ord must be"):
        mk.norm(x, ord=-1)  # p-norms need p > 0 (ord=3 is a valid p-norm, as in TF)
    with pytest.raises(TypeError, match="expects a list of tensors"):
        mk.clip_by_global_norm(x, 1.0)
    with pytest.raises(ValueError, match="incompatible shapes|broadcast"):
        mk.add(x, mk.constant(rand(3)))

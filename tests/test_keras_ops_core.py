"""keras.ops core/nn/linalg/image beyond the generated cases: every Keras 3.15 name present,
the control flow ops (eagerly, inside mk.function, on the tape) against jax.lax, custom_gradient
with Keras's signature, jvp against jax.jvp, ops on symbolic tensors, and bad-input errors."""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.keras.ops import core, image, linalg, nn

NAMES = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "keras_ops", "names.json")))
XS = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
INIT = np.random.default_rng(1).standard_normal(3).astype(np.float32)


@pytest.mark.parametrize("module", ["core", "nn", "linalg", "image"])
def test_every_keras_name_is_here(module):
    ours = {"core": core, "nn": nn, "linalg": linalg, "image": image}[module]
    missing = [n for n in NAMES[module] if not callable(getattr(ours, n, None))]
    assert not missing
    assert sorted(ours.__all__) == NAMES[module]  # what `import *` of the module gives keras.ops


def _step_jax(c, x):
    return c * jnp.cos(x) + x, c * x


def _step_mk(c, x):
    return c * mk.cos(x) + x, c * x


def _scan_loss_jax(init, xs, reverse=False):
    c, ys = jax.lax.scan(_step_jax, init, xs, reverse=reverse)
    return jnp.sum(c * 2.0) + jnp.sum(ys * ys)


def _scan_loss_mk(init, xs, reverse=False):
    c, ys = core.scan(_step_mk, init, xs, reverse=reverse)
    return mk.reduce_sum(c * 2.0) + mk.reduce_sum(ys * ys)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_values_and_gradients_eager_and_compiled(reverse):
    c, ys = core.scan(_step_mk, INIT, XS, reverse=reverse)
    c_ref, ys_ref = jax.lax.scan(_step_jax, INIT, XS, reverse=reverse)
    np.testing.assert_allclose(c, c_ref, rtol=1e-5)
    np.testing.assert_allclose(ys, ys_ref, rtol=1e-5)
    grads_ref = jax.grad(_scan_loss_jax, argnums=(0, 1))(INIT, XS, reverse)
    init, xs = mk.Variable(INIT), mk.Variable(XS)

    def grads():
        with mk.GradientTape() as tape:
            loss = _scan_loss_mk(init, xs, reverse)
        return tape.gradient(loss, [init, xs])

    for got in (grads(), mk.function(grads)()):
        for g, r in zip(got, grads_ref):
            np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5)


def test_scan_second_order_and_length_only():
    init = mk.constant(INIT)
    with mk.GradientTape() as outer:
        outer.watch(init)
        with mk.GradientTape() as inner:
            inner.watch(init)
            loss = _scan_loss_mk(init, XS)
        g = inner.gradient(loss, init)
        s = mk.reduce_sum(g * g)
    ref = jax.grad(lambda i: jnp.sum(jax.grad(_scan_loss_jax)(i, XS) ** 2))(INIT)
    np.testing.assert_allclose(outer.gradient(s, init), ref, rtol=1e-4, atol=1e-5)
    carry, ys = core.scan(lambda c, _: (c + 1.0, c), 0.0, length=4)
    assert float(carry) == 4.0 and np.asarray(ys).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_scan_and_map_in_a_function_without_tape_are_one_loop():
    steps = mk.Variable(0.0)

    def step(c, x):
        steps.assign_add(1.0)  # a Variable assigned in the body is carried through the loop
        return _step_mk(c, x)

    @mk.function(autograph=False)
    def run(init, xs):
        return core.scan(step, init, xs, reverse=True), core.map(lambda r: mk.reduce_sum(r * r), xs)

    (c, ys), squares = run(INIT, XS)
    c_ref, ys_ref = jax.lax.scan(_step_jax, INIT, XS, reverse=True)
    np.testing.assert_allclose(c, c_ref, rtol=1e-5)
    np.testing.assert_allclose(ys, ys_ref, rtol=1e-5)
    np.testing.assert_allclose(squares, np.sum(XS * XS, axis=1), rtol=1e-5)
    assert float(steps.numpy()) == 5.0
    program, _ = run.program_for((INIT, XS))
    assert str(program.jaxpr).count("scan[") == 2  # one loop each, whatever the length
    with pytest.raises(TypeError, match="carry output"):
        mk.function(lambda: core.scan(lambda c, x: (c * x, c), 1.0, XS), autograph=False)()


def test_map_vectorized_map_associative_scan():
    np.testing.assert_allclose(core.map(lambda r: mk.reduce_sum(r * r), XS), jnp.sum(XS * XS, axis=1), rtol=1e-6)
    pair = core.vectorized_map(lambda e: (e[0] * e[1], e[0]), (XS, XS + 1))
    np.testing.assert_allclose(pair[0], XS * (XS + 1), rtol=1e-6)
    def compose(first, second):  # affine maps x -> a x + b, composed: associative, not commutative
        return first[0] * second[0], first[1] * second[0] + second[1]

    for axis, reverse in ((0, False), (0, True), (1, True)):
        got = core.associative_scan(compose, (XS, XS * 2.0), reverse=reverse, axis=axis)
        want = jax.lax.associative_scan(compose, (XS, XS * 2.0), reverse=reverse, axis=axis)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_while_fori_cond_switch_eager_compiled_and_differentiated():
    v = mk.Variable(XS[0])

    def run():
        with mk.GradientTape() as tape:
            _, w = core.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * v), (0, mk.ones(3)),
                                   maximum_iterations=3)
            f = core.fori_loop(0, 2, lambda i, a: a + v * mk.cast(i, "float32"), mk.zeros(3))
            c = core.cond(mk.reduce_sum(v) > 100.0, lambda: v * 2.0, lambda: v * v)
            s = core.switch(5, [lambda a: a, lambda a: a * 3.0], v)  # clamped to the last branch
            loss = mk.reduce_sum(w) + mk.reduce_sum(f) + mk.reduce_sum(c) + mk.reduce_sum(s)
        return loss, tape.gradient(loss, v)

    x = XS[0]
    want = np.sum(x ** 3) + np.sum(x) + np.sum(x * x) + 3 * np.sum(x)
    want_grad = 3 * x ** 2 + 1 + 2 * x + 3
    for loss, grad in (run(), mk.function(run)()):
        np.testing.assert_allclose(loss, want, rtol=1e-5)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-5)
    assert core.while_loop(lambda i: i < 10, lambda i: i + 1, 0, maximum_iterations=4).numpy() == 4
    assert core.switch(mk.constant(-2), [lambda: 1.0, lambda: 2.0]) == 1.0


def test_custom_gradient_with_keras_signature():
    @core.custom_gradient
    def log1pexp(x):
        e = mk.exp(x)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            return upstream * (1.0 - 1.0 / (1.0 + e))

        return mk.math.log(1.0 + e), grad

    x = mk.constant([0.0, 100.0])
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    np.testing.assert_allclose(tape.gradient(y, x), [0.5, 1.0])


def test_jvp_matches_jax():
    def f_mk(a, b):
        return mk.sin(a) * b, mk.reduce_sum(a * b)

    def f_jax(a, b):
        return jnp.sin(a) * b, jnp.sum(a * b)

    a, b, ta, tb = XS[0], XS[1], XS[2], XS[3]
    (out, tangent) = linalg.jvp(f_mk, (a, b), (ta, tb))
    out_ref, tangent_ref = jax.jvp(f_jax, (a, b), (ta, tb))
    for got, want in zip(list(out) + list(tangent), list(out_ref) + list(tangent_ref)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    _, _, aux = linalg.jvp(lambda a: (a * 2.0, "aux"), (a,), (ta,), has_aux=True)
    assert aux == "aux"


def test_ops_on_symbolic_tensors_build_a_model():
    images = mk.Input((6, 6, 3))
    x = nn.conv(images, np.ones((3, 3, 3, 4), np.float32), padding="same")
    x = nn.relu(x)
    x = nn.max_pool(x, 2)
    x = image.resize(x, (5, 5))
    assert x.shape == (None, 5, 5, 4)
    mean, variance = nn.moments(x, axes=[1, 2])
    assert mean.shape == (None, 4) and variance.shape == (None, 4)
    out = nn.softmax(core.cast(mean, "float32") + linalg.norm(x, axis=(1, 2)))
    model = mk.Model(images, out)
    data = np.random.default_rng(2).uniform(size=(2, 6, 6, 3)).astype(np.float32)
    eager = nn.relu(nn.conv(data, np.ones((3, 3, 3, 4), np.float32), padding="same"))
    eager = image.resize(nn.max_pool(eager, 2), (5, 5))
    want = nn.softmax(nn.moments(eager, axes=[1, 2])[0] + linalg.norm(eager, axis=(1, 2)))
    np.testing.assert_allclose(model(data), want, rtol=1e-5)
    np.testing.assert_allclose(mk.function(model)(data), want, rtol=1e-5)


def test_affine_transform_divides_by_the_projective_part_as_documented():
    picture = np.arange(2 * 6 * 7, dtype=np.float32).reshape(2, 6, 7, 1)
    t = np.array([0.9, 0.1, 0.4, -0.2, 1.1, 0.3, 0.03, -0.02], np.float32)
    got = np.asarray(image.affine_transform(picture, t, interpolation="nearest"))
    checked = 0
    for y in range(6):
        for x in range(7):
            k = t[6] * x + t[7] * y + 1.0
            fx, fy = (t[0] * x + t[1] * y + t[2]) / k, (t[3] * x + t[4] * y + t[5]) / k
            if min(abs(fx % 1 - 0.5), abs(fy % 1 - 0.5)) < 1e-3:
                continue  # a tie that float rounding may break either way
            sx, sy = int(np.round(fx)), int(np.round(fy))
            inside = 0 <= sx < 7 and 0 <= sy < 6
            np.testing.assert_array_equal(got[:, y, x], picture[:, sy, sx] if inside else 0.0)
            checked += 1
    assert checked > 35


def test_variables_and_python_numbers_are_inputs():
    v = mk.Variable([[1.0, -2.0]])
    with mk.GradientTape() as tape:
        y = mk.reduce_sum(nn.leaky_relu(v, 0.5) * 3.0)
    np.testing.assert_allclose(tape.gradient(y, v), [[3.0, 1.5]])
    assert float(nn.softplus(0.0)) == pytest.approx(np.log(2.0))
    assert core.shape(v) == (1, 2) and core.dtype(v) == "float32" and core.is_tensor(mk.constant(1.0))
    assert isinstance(core.convert_to_numpy(v), np.ndarray)


@pytest.mark.parametrize("call, error, words", [
    (lambda: nn.sigmoid(np.array([1, 2], np.int32)), TypeError, ["keras.ops.sigmoid", "int32"]),
    (lambda: nn.softmax(np.ones((2, 3), np.float32), axis=4), ValueError, ["keras.ops.softmax", "(2, 3)"]),
    (lambda: nn.conv(np.ones((1, 5, 5, 3), np.float32), np.ones((3, 3, 2, 4), np.float32)), ValueError,
     ["input channels 3", "kernel in_channels 2"]),
    (lambda: nn.categorical_crossentropy(np.ones((2, 3)), np.ones((2, 4))), ValueError,
     ["target.shape=(2, 3)", "output.shape=(2, 4)"]),
    (lambda: nn.binary_crossentropy(np.ones((2,)), np.ones((3,))), ValueError, ["(2,)", "(3,)"]),
    (lambda: linalg.solve(np.eye(3, dtype=np.float32), np.ones((2, 1), np.float32)), ValueError,
     ["a.shape=(3, 3)", "b.shape=(2, 1)"]),
    (lambda: linalg.inv(np.ones((2, 3), np.float32)), ValueError, ["square", "(2, 3)"]),
    (lambda: image.rgb_to_hsv(np.ones((4, 4, 3), np.int32)), ValueError, ["float dtype", "int32"]),
    (lambda: image.resize(np.ones((4, 4), np.float32), (2, 2)), ValueError, ["images.shape=(4, 4)"]),
    (lambda: nn.max_pool(np.ones((1, 4, 4, 1), np.float32), 2, padding="full"), ValueError, ["padding", "full"]),
    (lambda: core.scatter_update(np.ones(3), np.array([[0]]), np.ones(1), reduction="avg"), ValueError,
     ["reduction", "avg"]),
    (lambda: nn.one_hot(np.array([1]), 3, axis=5), ValueError, ["axis", "5"]),
])
def test_bad_input_errors_name_the_op_and_what_was_received(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value)

"""keras.ops.numpy and keras.ops.math against Keras 3 on JAX: every case of
keras_ops_numpy_cases.py (values, dtypes, output structure, first-order gradients and some
Hessian-vector products, from tests/fixtures/keras_ops_numpy/reference.npz, made by
make_reference.py beside it), every Keras 3.15 name present, ops on symbolic tensors in a
functional model, and bad-input errors."""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from keras_ops_cases import hash_id
from keras_ops_numpy_cases import CASES, call, inputs

import minikeras as mk
from minikeras import keras
from minikeras.keras.ops import einops as keinops, math as kmath, numpy as knp

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_ops_numpy")
REF = np.load(os.path.join(HERE, "reference.npz"))
NAMES = json.load(open(os.path.join(HERE, "names.json")))
MODULES = {"numpy": knp, "math": kmath, "einops": keinops}
TOLERANCE = dict(rtol=2e-4, atol=2e-5)


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _is_float(dtype):
    return np.issubdtype(np.dtype(dtype), np.floating)


def _compare(got, expected, options, what):
    if "partition" in options:
        k = options["partition"] + 1
        got, expected = (np.concatenate([np.sort(v[..., :k]), np.sort(v[..., k:])], axis=-1) for v in (got, expected))
    tol = dict(TOLERANCE, **{k: options[k] for k in ("rtol", "atol") if k in options})
    if expected.dtype == np.float16:
        got, expected = got.astype(np.float32), expected.astype(np.float32)
    np.testing.assert_allclose(got, expected, **tol, err_msg=what)


@pytest.mark.parametrize("module", ["numpy", "math"])
def test_every_keras_name_is_here(module):
    missing = [n for n in NAMES[module] if not callable(getattr(MODULES[module], n, None))]
    flat = [n for n in NAMES[module] if getattr(keras.ops, n, None) is not getattr(MODULES[module], n, None)]
    assert not missing and not flat


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_keras(case):
    case_id, op, arrays, kwargs, options = case
    if f"{case_id}|structure" not in REF:
        pytest.fail(f"{case_id} is not in reference.npz: run make_reference.py")
    module, name = op.split(".")
    fn = getattr(MODULES[module], name)
    values = inputs(case_id, arrays)
    out = call(fn, arrays, values, kwargs, options)
    assert str(REF[f"{case_id}|structure"]) == ("tuple" if isinstance(out, tuple) else
                                                "list" if isinstance(out, list) else "single")
    outs = [np.asarray(o) for o in _leaves(out)]
    for j, o in enumerate(outs):
        expected = REF[f"{case_id}|out{j}"]
        assert o.dtype == expected.dtype, f"output {j}: {o.dtype} != Keras's {expected.dtype}"
        assert o.shape == expected.shape, f"output {j}: {o.shape} != Keras's {expected.shape}"
        _compare(o, expected, options, f"output {j}")

    wrt = [i for i, v in enumerate(values) if _is_float(v.dtype)]
    if not wrt or f"{case_id}|grad{wrt[0]}" not in REF:
        return
    rng = np.random.default_rng(hash_id(case_id + "|w") % (2 ** 32))
    weights = {j: rng.standard_normal(o.shape).astype(np.float32) for j, o in enumerate(outs) if _is_float(o.dtype)}
    sources = [mk.constant(values[i]) for i in wrt]

    def with_sources(xs):
        full = list(values)
        for i, x in zip(wrt, xs):
            full[i] = x
        return full

    order2 = f"{case_id}|hvp{wrt[0]}" in REF
    with mk.GradientTape() as outer:
        outer.watch(sources)
        with mk.GradientTape() as tape:
            tape.watch(sources)
            res = _leaves(call(fn, arrays, with_sources(sources), kwargs, options))
            loss = mk.add_n([mk.reduce_sum(mk.cast(res[j], "float32") * w) for j, w in weights.items()])
        grads = tape.gradient(loss, sources, unconnected_gradients="zero")
        if order2:
            tangents = [rng.standard_normal(values[i].shape).astype(values[i].dtype) for i in wrt]
            along = mk.add_n([mk.reduce_sum(g * t) for g, t in zip(grads, tangents)])
    for i, g in zip(wrt, grads):
        _compare(np.asarray(g), REF[f"{case_id}|grad{i}"], options, f"gradient {i}")
    if order2:
        hvp = outer.gradient(along, sources, unconnected_gradients="zero")
        for i, h in zip(wrt, hvp):
            np.testing.assert_allclose(np.asarray(h), REF[f"{case_id}|hvp{i}"], rtol=1e-3, atol=1e-4,
                                       err_msg=f"Hessian-vector product {i}")


def test_third_order_through_a_composition_matches_jax():
    x0 = np.array([0.3, -0.7, 1.1], np.float32)

    def jax_f(x):
        return jnp.sum(jnp.tanh(x) * jnp.exp(x) + jax.scipy.special.logsumexp(x))

    x = mk.constant(x0)
    with mk.GradientTape() as t3:
        t3.watch(x)
        with mk.GradientTape() as t2:
            t2.watch(x)
            with mk.GradientTape() as t1:
                t1.watch(x)
                y = keras.ops.sum(keras.ops.tanh(x) * keras.ops.exp(x) + keras.ops.logsumexp(x))
            g = keras.ops.sum(t1.gradient(y, x))
        h = keras.ops.sum(t2.gradient(g, x))
    third = t3.gradient(h, x)
    expected = jax.grad(lambda v: jnp.sum(jax.grad(lambda u: jnp.sum(jax.grad(jax_f)(u)))(v)))(x0)
    np.testing.assert_allclose(third, expected, rtol=1e-4, atol=1e-5)


def test_variables_get_gradients_inside_a_compiled_step():
    w = mk.Variable(np.array([[0.5, -1.0], [2.0, 0.25]], np.float32))
    x = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)

    @mk.function
    def step():
        with mk.GradientTape() as tape:
            loss = keras.ops.mean(keras.ops.square(keras.ops.matmul(x, w)))
        return tape.gradient(loss, w)

    expected = jax.grad(lambda v: jnp.mean(jnp.square(x @ v)))(np.asarray(w))
    np.testing.assert_allclose(step(), expected, rtol=1e-6)


def test_two_dimensional_float32_matmul_gradients_on_the_dense_product():
    # keras.ops.matmul of two float32 matrices is mk.matmul's op (whose x^T g runs on the native
    # kernel, as layers.Dense's); its gradients must still be jnp.matmul's.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 48)).astype(np.float32)
    w = mk.Variable(rng.standard_normal((48, 40)).astype(np.float32))
    xt = mk.constant(x)

    @mk.function
    def step():
        with mk.GradientTape() as tape:
            tape.watch(xt)
            loss = keras.ops.sum(keras.ops.tanh(keras.ops.matmul(xt, w)))
        return tape.gradient(loss, [xt, w])

    gx, gw = step()
    jx, jw = jax.grad(lambda a, b: jnp.sum(jnp.tanh(a @ b)), argnums=(0, 1))(x, np.asarray(w))
    np.testing.assert_allclose(gx, jx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw, jw, rtol=1e-4, atol=1e-4)
    assert knp.matmul(x, np.asarray(w)).dtype == np.float32


def test_matmul_of_a_non_tensor_names_the_op():
    # the float32-matrix fast path checks its inputs without converting them: a non-array goes on
    # to the op's own error, which names it (jnp alone raises a bare TypeError)
    with pytest.raises(TypeError) as raised:
        keras.ops.matmul(object(), np.ones((2, 2), np.float32))
    assert str(raised.value).startswith("keras.ops.matmul: an input is not a tensor, array or number"), raised.value


def test_ops_on_symbolic_tensors_build_a_functional_model():
    inputs_ = keras.Input((4,))
    top, _ = keras.ops.top_k(inputs_, 2)
    out = keras.ops.concatenate([keras.ops.expand_dims(keras.ops.logsumexp(inputs_, axis=-1), -1),
                                 keras.ops.sort(top)], axis=-1)
    assert tuple(out.shape) == (None, 3)
    model = keras.Model(inputs_, out)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    expected = np.concatenate([jax.scipy.special.logsumexp(x, axis=-1, keepdims=True),
                               np.sort(np.sort(x, axis=-1)[:, -2:], axis=-1)], axis=-1)
    np.testing.assert_allclose(model(x), expected, rtol=1e-6)


@pytest.mark.parametrize("call_op, message", [
    (lambda: knp.add(np.ones((2, 3)), np.ones((4,))), r"keras\.ops\.add \(inputs: \(2, 3\) float32, \(4,\) float32\)"),
    (lambda: knp.matmul(np.ones((2, 3)), np.ones((4, 2))), r"keras\.ops\.matmul \(inputs: \(2, 3\) float32, \(4, 2\)"),
    (lambda: knp.sum(np.ones((2, 3)), axis=2), r"keras\.ops\.sum \(inputs: \(2, 3\) float32\).*axis 2"),
    (lambda: knp.transpose(np.ones((2, 3)), axes=(0, 0)), r"keras\.ops\.transpose"),
    (lambda: knp.bitwise_and(np.ones(3, np.float32), np.ones(3, np.float32)), r"keras\.ops\.bitwise_and.*float32"),
    (lambda: kmath.erf(np.arange(3)), r"keras\.ops\.erf \(inputs: \(3,\) int32\)"),
    (lambda: kmath.rsqrt(np.arange(3)), r"keras\.ops\.rsqrt \(inputs: \(3,\) int32\)"),
    (lambda: knp.ldexp(np.ones(3), np.ones(3)), r"ldexp exponent must be an integer type.*float32"),
    (lambda: kmath.stft(np.arange(8), 4, 2, 4), r"Expected `float32` or `float64`. Received: input type=int32"),
    (lambda: kmath.segment_sum(np.ones((3, 2)), np.zeros(4, np.int32), 2), r"same leading dimension.*\(4,\).*\(3, 2\)"),
    (lambda: kmath.segment_sum(np.ones(3), np.zeros(3, np.int32)), r"`num_segments` must be set"),
    (lambda: kmath.cdist(np.ones((2, 3)), np.ones((2, 4))), r"must match; received shapes \(2, 3\) and \(2, 4\)"),
    (lambda: knp.searchsorted(np.ones((2, 2)), np.ones(2)), r"sorted_sequence.shape=\(2, 2\)"),
    (lambda: knp.pad(np.ones(2), 1, mode="edge", constant_values=1), r"can only be provided when"),
    (lambda: kmath.fft((np.ones(3), np.ones(4))), r"x\[0\].shape = \(3,\), x\[1\].shape = \(4,\)"),
])
def test_bad_input_names_the_op_and_what_it_received(call_op, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call_op()


def test_view_as_real_inverts_view_as_complex():
    x = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)
    np.testing.assert_array_equal(kmath.view_as_real(kmath.view_as_complex(x)), x)


def test_vectorize_maps_a_function_of_tensors():
    f = knp.vectorize(lambda a, b: keras.ops.sum(a * b), signature="(n),(n)->()")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones(3, np.float32)
    np.testing.assert_allclose(f(a, b), a.sum(-1))
    x = mk.constant(a)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = keras.ops.sum(f(x, b * 2.0))
    np.testing.assert_allclose(tape.gradient(y, x), np.full((2, 3), 2.0))


def test_a_second_call_compiles_nothing_new():
    compiles, listening = [], [True]

    def listen(event, duration, **kwargs):  # jax.monitoring keeps listeners: this one stops after the test
        if listening[0] and event.endswith("backend_compile_duration"):
            compiles.append(event)
    jax.monitoring.register_event_duration_secs_listener(listen)
    x = np.ones((2, 3), np.float32)
    calls = [lambda: knp.nan_to_num(x), lambda: knp.std(x, axis=0), lambda: knp.stack([x, x]),
             lambda: knp.take(x, [0], axis=1), lambda: knp.split(x, 3, axis=1), lambda: knp.exp(x),
             lambda: knp.add(x, 1.0), lambda: kmath.top_k(x, 2), lambda: kmath.fft((x, x)), lambda: knp.kaiser(4, 1.0)]
    for op in calls:
        op()
    compiles.clear()
    for op in calls:
        op()
    listening[0] = False
    assert not compiles

"""keras.ops.core/nn/linalg/image against Keras 3 on JAX: every case of keras_ops_cases.py,
values, dtypes, first-order gradients and (some) Hessian-vector products, from
tests/fixtures/keras_ops/reference.npz (made by make_reference.py beside it)."""
import os

import numpy as np
import pytest
from keras_ops_cases import CASES, hash_id, inputs

import minikeras as mk
from minikeras.keras.ops import core, image, linalg, nn

REF = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_ops", "reference.npz"))
MODULES = {"core": core, "nn": nn, "linalg": linalg, "image": image}
TOLERANCE = dict(rtol=2e-4, atol=2e-5)


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _is_float(dtype):
    return np.issubdtype(np.dtype(dtype), np.floating)


def _call(op, arrays, kwargs, values):
    module, name = op.split(".")
    fn = getattr(MODULES[module], name)
    pos = [v for (key, *_), v in zip(arrays, values) if key is None]
    kw = {key: v for (key, *_), v in zip(arrays, values) if key is not None}
    return fn(*pos, **kw, **kwargs)


def _loss(outs, weights):
    return mk.add_n([mk.reduce_sum(mk.cast(outs[j], "float32") * w) for j, w in weights.items()])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_keras(case):
    case_id, op, arrays, kwargs, options = case
    values = inputs(case_id, arrays)
    out = _call(op, arrays, kwargs, values)
    structure = str(REF[f"{case_id}|structure"])
    assert structure == ("tuple" if isinstance(out, tuple) else "list" if isinstance(out, list) else "single")
    outs = [np.asarray(o) for o in _leaves(out)]
    tol = dict(TOLERANCE, **{k: options[k] for k in ("rtol", "atol") if k in options})
    for j, o in enumerate(outs):
        expected = REF[f"{case_id}|out{j}"]
        assert o.dtype == expected.dtype, f"output {j}: {o.dtype} != Keras's {expected.dtype}"
        assert o.shape == expected.shape, f"output {j}: {o.shape} != Keras's {expected.shape}"
        np.testing.assert_allclose(o, expected, **tol, err_msg=f"output {j}")

    wrt = options.get("wrt") or [i for i, v in enumerate(values) if _is_float(v.dtype)]
    if f"{case_id}|grad{wrt[0]}" not in REF if wrt else True:
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
            loss = _loss(_leaves(_call(op, arrays, kwargs, with_sources(sources))), weights)
        grads = tape.gradient(loss, sources, unconnected_gradients="zero")
        if order2:
            tangents = [rng.standard_normal(values[i].shape).astype(np.float32) for i in wrt]
            along = mk.add_n([mk.reduce_sum(g * t) for g, t in zip(grads, tangents)])
    for i, g in zip(wrt, grads):
        np.testing.assert_allclose(np.asarray(g), REF[f"{case_id}|grad{i}"], **tol, err_msg=f"gradient {i}")
    if order2:
        hvp = outer.gradient(along, sources, unconnected_gradients="zero")
        for i, h in zip(wrt, hvp):
            np.testing.assert_allclose(np.asarray(h), REF[f"{case_id}|hvp{i}"], rtol=1e-3, atol=1e-4,
                                       err_msg=f"Hessian-vector product {i}")

"""``check_layer``: a layer's output, gradients and second derivatives against a JAX reference.

    check_layer(layer, lambda x, kernel, bias: jnp_expression, x)

builds ``layer`` on ``x``, then compares (through ``conftest._reference``, one compiled JAX call)
  * ``layer(x)`` with ``fn(x, *weights)`` (weights in ``layer.trainable_weights`` order),
  * the tape gradient of ``sum(w * layer(x))`` for the input (if floating) and every trainable
    weight with ``jax.vjp``,
  * with ``order=2``, the Hessian-vector product of that sum from two nested tapes with the JVP
    of JAX's VJP.
"""
import numpy as np
from conftest import ATOL, RTOL, _reference, assert_close

import minikeras as mk


def check_layer(layer, fn, x, order=2, rtol=RTOL, atol=ATOL, seed=0, training=None):
    x = np.asarray(x)
    layer(x)  # build
    weights = list(layer.trainable_weights)
    arrays = [x] + [w.numpy() for w in weights]
    x_diff = x.dtype.kind == "f"
    wrt = ([0] if x_diff else []) + list(range(1, len(arrays)))
    rng = np.random.default_rng(seed + 1000)

    def sources(xt):
        return ([xt] if x_diff else []) + weights

    xt = mk.constant(x)
    with mk.GradientTape() as tape:
        tape.watch(sources(xt))
        out = layer(xt, training=training)
    w = rng.standard_normal(out.shape).astype(out.dtype.name)
    tangents = [rng.standard_normal(arrays[i].shape).astype(arrays[i].dtype) for i in wrt]
    expected_out, expected_grads, expected_hvp = _reference(fn, arrays, wrt, w, tangents, order)
    assert_close(out, expected_out, rtol, atol, "forward")
    grads = tape.gradient(out, sources(xt), output_gradients=mk.constant(w))
    for i, g, e in zip(wrt, grads, expected_grads):
        assert g is not None, f"gradient of argument {i} is None"
        assert_close(g, e, rtol, atol, f"gradient of argument {i}")
    if order < 2:
        return out
    xt = mk.constant(x)
    with mk.GradientTape() as outer:
        outer.watch(sources(xt))
        with mk.GradientTape() as inner:
            inner.watch(sources(xt))
            out2 = layer(xt, training=training)
        grads = inner.gradient(out2, sources(xt), output_gradients=mk.constant(w))
        total = mk.reduce_sum(grads[0] * tangents[0])
        for g, v in zip(grads[1:], tangents[1:]):
            total = total + mk.reduce_sum(g * v)
    hvp = outer.gradient(total, sources(xt), unconnected_gradients="zero")
    for i, h, e in zip(wrt, hvp, expected_hvp):
        assert_close(h, e, rtol * 5, atol * 5, f"Hessian-vector product, argument {i}")
    return out

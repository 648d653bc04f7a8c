"""ReversibleEmbedding's reverse projection: values and gradients against jax, tied and untied."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close, rand

import minikeras as mk


@pytest.mark.parametrize("tie", [True, False])
def test_reverse_projection_and_gradients_match_jax(tie):
    layer = mk.layers.ReversibleEmbedding(7, 3, tie_weights=tie, logit_soft_cap=2.0)
    layer(np.array([[1, 2]], np.int32))
    v, w = rand(2, 5, 3, seed=1), rand(2, 5, 7, seed=2)
    table = (layer.embeddings if tie else layer.reverse_embeddings).numpy()

    def reference(v, table):
        kernel = table.T if tie else table
        return jnp.tanh(v @ kernel / 2.0) * 2.0
    vt = mk.constant(v)
    with mk.GradientTape() as tape:
        tape.watch(vt)
        logits = layer(vt, reverse=True)
    weight = layer.embeddings if tie else layer.reverse_embeddings
    gv, gk = tape.gradient(logits, [vt, weight], output_gradients=mk.constant(w))
    assert_close(logits, reference(v, table), rtol=1e-5, atol=1e-6)
    ev, ek = jax.grad(lambda v, t: jnp.sum(reference(v, t) * w), (0, 1))(v, table)
    assert_close(gv, ev, rtol=1e-5, atol=1e-6)
    assert_close(gk, ek, rtol=1e-5, atol=1e-6)
    assert [x.name for x in layer.weights] == (["embeddings"] if tie else ["embeddings", "reverse_embeddings"])


def test_reverse_call_checks_the_vector_size():
    layer = mk.layers.ReversibleEmbedding(7, 3)
    with pytest.raises(ValueError, match="reverse call expects vectors of size 3"):
        layer(np.ones((2, 4), np.float32), reverse=True)

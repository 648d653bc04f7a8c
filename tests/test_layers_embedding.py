"""Embedding and LayerNormalization (and its fused op): JAX references to second order, weights, errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import check_grad, rand
from layer_reference import check_layer

import minikeras as mk

L = mk.layers
IDS = np.array([[0, 4, 4], [2, 1, 3]], np.int32)


def test_embedding_matches_take_to_second_order():
    layer = L.Embedding(5, 3)
    out = check_layer(layer, lambda ids, table: jnp.take(table, ids, axis=0), IDS)
    assert out.shape == (2, 3, 3) and layer.compute_output_shape((None, 3)) == (None, 3, 3)


def test_embedding_weights_defaults_and_float_ids():
    layer = L.Embedding(5, 3)
    layer.build(None)
    assert [(w.path, w.shape) for w in layer.weights] == [(f"{layer.name}/embeddings", (5, 3))]
    values = layer.embeddings.numpy()
    assert np.all(np.abs(values) <= 0.05)  # 'uniform': RandomUniform(-0.05, 0.05)
    assert layer.get_config()["embeddings_initializer"]["class_name"] == "RandomUniform"
    np.testing.assert_array_equal(layer(IDS.astype(np.float32)), values[IDS])  # floats are cast to int32
    table = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(L.Embedding(3, 2, weights=table)(np.array([2, 0])), table[[2, 0]])
    masked = L.Embedding(5, 3, mask_zero=True)
    np.testing.assert_array_equal(masked.compute_mask(mk.constant(IDS)), IDS != 0)
    np.testing.assert_array_equal(masked(IDS)._keras_mask, IDS != 0)  # the output carries it


def test_embedding_errors_name_the_layer_and_the_value():
    with pytest.raises(ValueError, match=r"`input_dim` must be a positive integer. Received: input_dim=0 \(of type "
                                         r"int\)"):
        L.Embedding(0, 3)
    with pytest.raises(ValueError, match=r"Received: input_dim=2.5 \(of type float\)"):
        L.Embedding(2.5, 3)
    with pytest.raises(ValueError, match="`output_dim` must be a positive integer. Received: output_dim=-1"):
        L.Embedding(3, -1)
    layer = L.Embedding(5, 3, name="words")
    with pytest.raises(IndexError, match=r"Embedding 'words' received id 5 at position \(1, 2\)"):
        layer(np.array([[0, 1, 2], [3, 4, 5]]))
    with pytest.raises(IndexError, match=r"received id -1 .*\[0, 5\)"):
        layer(np.array([[-1]]))
    # inside mk.function the ids cannot be checked: valid ids give the same rows, others NaN rows
    # (Keras 3 on JAX's jnp.take rule: ids in [-n, 0) count from the end)
    compiled = mk.function(lambda ids: layer(ids))
    np.testing.assert_array_equal(compiled(mk.constant(IDS)), layer.embeddings.numpy()[IDS])
    out = compiled(mk.constant([[0, 5, -1, 99]])).numpy()
    table = layer.embeddings.numpy()
    np.testing.assert_array_equal(out[0, [0, 2]], table[[0, -1]])
    assert np.isnan(out[0, [1, 3]]).all()


def layer_norm_ref(axes, epsilon=1e-3, rms=False):
    def fn(x, gamma, *beta):
        mean = jnp.mean(x, axis=axes, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
        shape = [n if i in axes else 1 for i, n in enumerate(x.shape)]
        if rms:
            return x / jnp.sqrt(var + epsilon) * gamma.reshape(shape)
        return (x - mean) / jnp.sqrt(var + epsilon) * gamma.reshape(shape) + (beta[0].reshape(shape) if beta else 0)
    return fn


@pytest.mark.parametrize("kwargs, axes", [({}, (2,)), ({"axis": [1, 2], "epsilon": 1e-5}, (1, 2)),
                                          ({"rms_scaling": True}, (2,)), ({"center": False}, (2,)),
                                          ({"axis": [0, 1, 2]}, (0, 1, 2))])
def test_layer_normalization_matches_reference_to_second_order(kwargs, axes):
    layer = L.LayerNormalization(gamma_initializer="glorot_uniform", beta_initializer="glorot_uniform", **kwargs)
    check_layer(layer, layer_norm_ref(axes, kwargs.get("epsilon", 1e-3), kwargs.get("rms_scaling", False)),
                rand(2, 3, 4, seed=5))
    only_gamma = kwargs.get("rms_scaling") or kwargs.get("center") is False
    assert [w.name for w in layer.weights] == (["gamma"] if only_gamma else ["gamma", "beta"])


def test_layer_normalization_config_and_errors():
    layer = L.LayerNormalization(center=False)
    layer(np.ones((2, 3), np.float32))
    assert [w.name for w in layer.weights] == ["gamma"] and layer.epsilon == 1e-3
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        L.LayerNormalization(axis=3)(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="was built for inputs of rank 2"):
        layer(np.ones((2, 4), np.float32))
    assert jax.tree_util.tree_leaves(L.LayerNormalization(axis=(1, 2)).get_config()["axis"]) == [1, 2]


def test_take_rows_gradient_drops_out_of_range_ids_like_jax():
    from minikeras.ops.nn_extra import take_rows
    table = rand(4, 2, seed=9)
    ids = np.array([1, 7, 1, -1], np.int32)

    @mk.function
    def grad(t, ids):
        with mk.GradientTape() as tape:
            tape.watch(t)
            loss = mk.reduce_sum(mk.where(mk.math.is_nan(take_rows(t, ids)), 0.0, take_rows(t, ids)) * 3.0)
        return tape.gradient(loss, t)

    expected = jax.grad(lambda t: jnp.sum(jnp.nan_to_num(jnp.take(t, ids, axis=0, mode="fill",
                                                                   fill_value=jnp.nan)) * 3.0))(table)
    np.testing.assert_allclose(grad(mk.constant(table), mk.constant(ids)), expected)


@pytest.mark.parametrize("weights", ["gamma", "beta", "both", "neither"])
def test_layer_norm_op_matches_jax_to_second_order(weights):
    from minikeras.ops.layer_norm import layer_norm
    use_gamma, use_beta = weights in ("gamma", "both"), weights in ("beta", "both")
    inputs = [rand(2, 3, 4, seed=1)] + [rand(1, 1, 4, seed=s) for s, use in ((2, use_gamma), (3, use_beta)) if use]

    def split(ws):
        ws = list(ws)
        return (ws.pop(0) if use_gamma else None), (ws.pop(0) if use_beta else None)

    def reference(x, *ws):
        gamma, beta = split(ws)
        mean = jnp.mean(x, axis=-1, keepdims=True)
        y = (x - mean) / jnp.sqrt(jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True) + 1e-3)
        return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)
    check_grad(lambda x, *ws: layer_norm(x, *split(ws), axes=(2,), epsilon=1e-3), reference, *inputs)

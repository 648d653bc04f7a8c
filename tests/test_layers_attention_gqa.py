"""GroupQueryAttention against Keras 3 on JAX.

The fixtures (``tests/fixtures/keras_gqa``, made by ``make_gqa_fixtures.py`` there) hold, for
small models with fixed weights, Keras's outputs and ``jax.grad`` of ``sum(output * r)`` for
every trainable weight; the same models built here take those weights and must give the same
numbers. ``gqa_cross.keras`` is Keras's whole model file (its weights in Keras's layout).
"""
import json
import os
import zipfile

import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk
from minikeras import keras

L = mk.layers
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_gqa")


def _gqa_self_masked():
    inp = mk.Input((6,), dtype="int32")
    h = L.Embedding(11, 8, mask_zero=True)(inp)
    y, s = L.GroupQueryAttention(head_dim=3, num_query_heads=4, num_key_value_heads=2)(
        h, h, return_attention_scores=True)
    return mk.Model(inp, [y, s])


def _gqa_cross():
    q, v, k = mk.Input((4, 6)), mk.Input((5, 6)), mk.Input((5, 3))
    am = mk.Input((4, 5), dtype="bool")
    y = L.GroupQueryAttention(head_dim=2, num_query_heads=6, num_key_value_heads=3)(
        q, v, k, attention_mask=am, use_causal_mask=True)
    return mk.Model([q, v, k, am], y)


def _gqa_causal_gate():
    x = mk.Input((5, 4))
    return mk.Model(x, L.GroupQueryAttention(head_dim=2, num_query_heads=2, num_key_value_heads=1, use_bias=False,
                                             use_gate=True)(x, x, use_causal_mask=True))


def _gqa_window_scores():
    x = mk.Input((6, 4))
    y, s = L.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=4, sliding_window=2)(
        x, x, use_causal_mask=True, return_attention_scores=True)
    return mk.Model(x, [y, s])


CASES = {"gqa_self_masked": _gqa_self_masked, "gqa_cross": _gqa_cross, "gqa_causal_gate": _gqa_causal_gate,
         "gqa_window_scores": _gqa_window_scores}


def _load(case):
    data = np.load(os.path.join(HERE, f"{case}.npz"))
    data = {k: data[k] for k in data}
    model = CASES[case]()
    model.set_weights([data[f"w{i}"] for i in range(len(model.weights))])
    inputs = [data[f"x{i}"] for i in range(sum(k.startswith("x") for k in data))]
    return model, data, inputs if len(inputs) > 1 else inputs[0]


def _outputs_and_gradients(model, inputs, r):
    with mk.GradientTape() as tape:
        outputs = model(inputs)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        loss = mk.reduce_sum(outputs[0] * r)
    return outputs, tape.gradient(loss, model.trainable_weights)


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_and_gradients_match_keras_on_jax(case):
    model, data, inputs = _load(case)
    outputs, grads = mk.function(_outputs_and_gradients)(model, inputs, data["r"])
    assert len(outputs) == sum(k.startswith("y") for k in data)
    for i, y in enumerate(outputs):
        assert_close(y, data[f"y{i}"], rtol=1e-5, atol=1e-5, what=f"{case} output {i}")
    assert len(grads) == sum(k.startswith("g") for k in data)
    for i, (w, g) in enumerate(zip(model.trainable_weights, grads)):
        assert_close(g, data[f"g{i}"], rtol=1e-4, atol=1e-5, what=f"{case} gradient of {w.path}")


def test_weights_layout_and_symbolic_shapes_are_keras_s():
    layer = L.GroupQueryAttention(head_dim=3, num_query_heads=4, num_key_value_heads=2, use_gate=True)
    q, v = mk.Input((4, 8)), mk.Input((5, 8))
    y, scores = layer(q, v, return_attention_scores=True)
    assert (y.shape, scores.shape) == ((None, 4, 8), (None, 4, 4, 5))
    assert layer.name.startswith("grouped_query_attention")
    assert [(w.name, w.shape) for w in layer.weights] == [
        ("kernel", (8, 4, 3)), ("bias", (4, 3)), ("kernel", (8, 2, 3)), ("bias", (2, 3)), ("kernel", (8, 4, 3)),
        ("bias", (4, 3)), ("kernel", (8, 2, 3)), ("bias", (2, 3)), ("kernel", (4, 3, 8)), ("bias", (8,))]
    assert layer.compute_output_shape((None, 4, 8), (None, 5, 8)) == (None, 4, 8)
    assert keras.layers.GroupQueryAttention is L.GroupQueryAttention


def test_key_value_heads_are_shared_by_consecutive_query_heads():
    """With one key/value head per two query heads, the scores of query heads 2j and 2j+1 use
    key head j: the formula written out with numpy."""
    rng = np.random.default_rng(1)
    layer = L.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2, use_bias=False)
    x = rng.normal(size=(1, 3, 5)).astype(np.float32)
    _, scores = layer(x, x, return_attention_scores=True)
    wq, wk = layer.weights[0].numpy(), layer.weights[1].numpy()
    q = np.einsum("btm,muh->btuh", x, wq) / np.sqrt(2.0)
    k = np.einsum("bsm,mvh->bsvh", x, wk)
    logits = np.einsum("btuh,bsuh->buts", q, np.repeat(k, 2, axis=2))
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    assert_close(scores, expected / expected.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6, what="GQA scores")


def test_dropout_only_in_training_and_causal_rows_do_not_look_ahead():
    layer = L.GroupQueryAttention(head_dim=2, num_query_heads=2, num_key_value_heads=1, dropout=0.5, seed=3)
    x = np.random.default_rng(0).normal(size=(2, 5, 4)).astype(np.float32)
    y = layer(x, x, use_causal_mask=True)
    x2 = x.copy()
    x2[:, 3:] += 1.0
    assert_close(layer(x2, x2, use_causal_mask=True)[:, :3], y[:, :3], what="outputs before the change")
    assert not np.allclose(layer(x, x, training=True), layer(x, x, training=False))


def test_keras_model_file_loads_and_ours_reloads(tmp_path):
    data = np.load(os.path.join(HERE, "gqa_cross.npz"))
    inputs = [data[f"x{i}"] for i in range(4)]
    model = mk.saving.load_model(os.path.join(HERE, "gqa_cross.keras"))
    gqa = [layer for layer in model.layers if isinstance(layer, L.GroupQueryAttention)][0]
    assert (gqa.head_dim, gqa.num_query_heads, gqa.num_key_value_heads) == (2, 6, 3)
    assert_close(model(inputs), data["y0"], rtol=1e-5, atol=1e-5, what="loaded .keras output")
    path = str(tmp_path / "ours.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
    saved = [layer for layer in config["config"]["layers"] if layer["config"]["name"] == gqa.name][0]
    assert (saved["module"], saved["class_name"]) == ("keras.layers", "GroupQueryAttention")  # Keras's export name
    assert_close(mk.saving.load_model(path)(inputs), data["y0"], rtol=1e-5, atol=1e-5, what="reloaded output")
    config = gqa.get_config()
    clone = L.GroupQueryAttention.from_config(config)
    assert clone.get_config() == {**config, "name": clone.name}


def test_bad_arguments_and_inputs_name_the_layer_and_the_shapes():
    with pytest.raises(ValueError, match="`num_query_heads` must be divisible by `num_key_value_heads`"):
        L.GroupQueryAttention(head_dim=2, num_query_heads=3, num_key_value_heads=2)
    with pytest.raises(ValueError, match="`head_dim` must be a positive integer. Received: head_dim=0"):
        L.GroupQueryAttention(head_dim=0, num_query_heads=2, num_key_value_heads=1)
    with pytest.raises(ValueError, match="`sliding_window` must be `None` or a positive integer"):
        L.GroupQueryAttention(head_dim=2, num_query_heads=2, num_key_value_heads=1, sliding_window=0)
    layer = L.GroupQueryAttention(head_dim=2, num_query_heads=2, num_key_value_heads=1, name="gqa")
    q, v = np.zeros((2, 4, 6), np.float32), np.zeros((2, 5, 6), np.float32)
    with pytest.raises(ValueError, match=r"All dimensions of `value` and `key`, except the last one, must be equal. "
                                         r"Received: value_shape=\(2, 5, 6\) and key_shape=\(2, 3, 6\)"):
        layer(q, v, np.zeros((2, 3, 6), np.float32))
    with pytest.raises(ValueError, match=r"'gqa' expects `query` of shape \(batch, sequence, 6\) .* received `query` "
                                         r"of shape \(2, 4, 7\)"):
        layer(np.zeros((2, 4, 7), np.float32), v)
    with pytest.raises(ValueError, match=r"'gqa': `attention_mask` must be broadcastable to \(batch, target, source\) "
                                         r"= \(2, 4, 5\). Received: attention_mask.shape=\(2, 4, 6\)"):
        layer(q, v, attention_mask=np.ones((2, 4, 6), bool))
    with pytest.raises(ValueError, match=r"'gqa': `value_mask` must have the shape of its input without the last "
                                         r"axis, \(2, 5\). Received: value_mask.shape=\(2, 4\)"):
        layer(q, v, value_mask=np.ones((2, 4), bool))
    with pytest.raises(TypeError, match="must be called with query and value"):
        layer(q)

"""MultiHeadAttention, Attention, AdditiveAttention, EinsumDense and Keras masks against real Keras 3.

The fixtures (``tests/fixtures/keras_attention``, made by ``make_attention_fixtures.py`` there)
hold, for small models with fixed weights, Keras's outputs and the gradients of
``sum(output * r)`` for every trainable weight; the same models built here load those weights
(from Keras's ``.weights.h5`` files where there is one) and must give the same numbers.
"""
import os

import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk

L = mk.layers
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_attention")


def _mha_self_masked():
    inp = mk.Input((6,), dtype="int32")
    h = L.Embedding(11, 8, mask_zero=True)(inp)
    y, s = L.MultiHeadAttention(2, 4)(h, h, return_attention_scores=True)
    return mk.Model(inp, [y, s])


def _mha_fused_pooled():
    inp = mk.Input((6,), dtype="int32")
    h = L.Embedding(11, 8, mask_zero=True)(inp)
    a = L.MultiHeadAttention(2, 4, value_dim=3)(h, h)
    return mk.Model(inp, L.GlobalAveragePooling1D()(L.Dense(5)(a)))


def _mha_cross():
    q, v, k = mk.Input((4, 6)), mk.Input((5, 7)), mk.Input((5, 3))
    am = mk.Input((4, 5), dtype="bool")
    y, s = L.MultiHeadAttention(3, 2, value_dim=4, output_shape=(5,))(
        q, v, k, attention_mask=am, use_causal_mask=True, return_attention_scores=True)
    return mk.Model([q, v, k, am], [y, s])


def _mha_axes_gate():
    x = mk.Input((3, 2, 4))
    return mk.Model(x, L.MultiHeadAttention(2, 3, attention_axes=(1, 2), use_bias=False, use_gate=True)(x, x))


def _attention_dot():
    q, v = mk.Input((4, 3)), mk.Input((5, 3))
    y, s = L.Attention(use_scale=True)([L.Masking()(q), L.Masking()(v)], use_causal_mask=True,
                                       return_attention_scores=True)
    return mk.Model([q, v], [y, s])


def _attention_concat():
    q, v, k = mk.Input((4, 3)), mk.Input((5, 2)), mk.Input((5, 3))
    return mk.Model([q, v, k], L.Attention(use_scale=True, score_mode="concat")([q, v, k]))


def _additive_attention():
    q, v = mk.Input((4, 3)), mk.Input((5, 3))
    y, s = L.AdditiveAttention()([L.Masking()(q), L.Masking()(v)], return_attention_scores=True)
    return mk.Model([q, v], [y, s])


def _masking_sequential():
    return mk.Sequential([mk.Input((5, 3)), L.Masking(), L.Dense(4, activation="tanh"), L.LayerNormalization(),
                          L.GlobalAveragePooling1D()])


def _mask_merge():
    inp = mk.Input((5,), dtype="int32")
    e1 = L.Embedding(9, 4, mask_zero=True)(inp)
    e2 = L.Dense(4)(e1)
    joined = L.Concatenate(axis=1)([L.Add()([e1, e2]), e2])
    return mk.Model(inp, L.GlobalAveragePooling1D()(joined))


CASES = {name[1:]: fn for name, fn in list(globals().items()) if name.startswith("_") and callable(fn)
         and name[1:] in {f[:-4] for f in os.listdir(HERE) if f.endswith(".npz")}}  # the models of the fixtures


def _load(case):
    data = np.load(os.path.join(HERE, f"{case}.npz"))
    data = {k: data[k] for k in data}
    model = CASES[case]()
    h5 = os.path.join(HERE, f"{case}.weights.h5")
    if os.path.exists(h5):
        model.load_weights(h5)
        for i, w in enumerate(model.weights):  # the file put Keras's weights where Keras has them
            assert_close(w.numpy(), data[f"w{i}"], rtol=0, atol=0, what=f"{case} weight {w.path}")
    else:
        model.set_weights([data[f"w{i}"] for i in range(len(model.weights))])
    inputs = [data[f"x{i}"] for i in range(sum(k.startswith("x") for k in data))]
    return model, data, inputs if len(inputs) > 1 else inputs[0]


def test_every_fixture_has_a_model():
    assert len(CASES) == 9


def _outputs_and_gradients(model, inputs, r):
    with mk.GradientTape() as tape:
        outputs = model(inputs)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        loss = mk.reduce_sum(outputs[0] * r)
    return outputs, tape.gradient(loss, model.trainable_weights)


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_and_gradients_match_keras(case):
    model, data, inputs = _load(case)
    # compiled (one program per case: op-by-op eager runs compile each small op); the eager
    # path is checked on one case below
    outputs, grads = mk.function(_outputs_and_gradients)(model, inputs, data["r"])
    for i, y in enumerate(outputs):
        assert_close(y, data[f"y{i}"], rtol=1e-5, atol=1e-5, what=f"{case} output {i}")
    assert len(grads) == sum(k.startswith("g") for k in data)
    for i, (w, g) in enumerate(zip(model.trainable_weights, grads)):
        assert_close(g, data[f"g{i}"], rtol=1e-4, atol=1e-5, what=f"{case} gradient of {w.path}")


def test_eager_model_gives_the_same_outputs_and_gradients():
    model, data, inputs = _load("mha_self_masked")
    (y, scores), grads = _outputs_and_gradients(model, inputs, data["r"])
    assert_close(y, data["y0"], rtol=1e-5, atol=1e-5, what="eager output")
    assert_close(scores, data["y1"], rtol=1e-5, atol=1e-5, what="eager scores")
    for i, g in enumerate(grads):
        assert_close(g, data[f"g{i}"], rtol=1e-4, atol=1e-5, what=f"eager gradient {i}")


def test_keras_model_file_loads_and_ours_reloads(tmp_path):
    data = np.load(os.path.join(HERE, "mha_cross.npz"))
    inputs = [data[f"x{i}"] for i in range(4)]
    model = mk.saving.load_model(os.path.join(HERE, "mha_cross.keras"))
    mha = [layer for layer in model.layers if isinstance(layer, L.MultiHeadAttention)][0]
    assert (mha.num_heads, mha.key_dim, mha.value_dim) == (3, 2, 4)
    assert_close(model(inputs)[0], data["y0"], rtol=1e-5, atol=1e-5, what="loaded .keras output")
    path = str(tmp_path / "ours.keras")
    model.save(path)
    again = mk.saving.load_model(path)
    assert_close(again(inputs)[1], data["y1"], rtol=1e-5, atol=1e-5, what="reloaded scores")
    config = mha.get_config()
    clone = L.MultiHeadAttention.from_config(config)
    assert clone.get_config() == {**config, "name": clone.name}


def test_mask_flows_through_sequential_functional_and_subclassed_models():
    ids = np.array([[3, 1, 0, 0], [2, 0, 0, 0]])

    class Pooled(mk.Model):
        def __init__(self):
            super().__init__()
            self.embed = L.Embedding(5, 2, mask_zero=True)
            self.dense = L.Dense(3)
            self.pool = L.GlobalAveragePooling1D()

        def call(self, x):
            return self.pool(self.dense(self.embed(x)))
    sub = Pooled()
    y = sub(ids)
    emb, dense = sub.embed.embeddings.numpy(), sub.dense
    h = emb[ids] @ dense.kernel.numpy() + dense.bias.numpy()
    keep = (ids != 0)[..., None]
    assert_close(y, (h * keep).sum(1) / keep.sum(1), what="subclassed model, padding left out of the mean")
    seq = mk.Sequential([sub.embed, sub.dense])
    out = seq(ids)
    np.testing.assert_array_equal(out._keras_mask, ids != 0)
    inp = mk.Input((4,), dtype="int32")
    x = sub.dense(sub.embed(inp))
    assert x._keras_mask.shape == (None, 4)
    np.testing.assert_array_equal(mk.Model(inp, x)(ids)._keras_mask, ids != 0)
    given = mk.constant(ids > 1)
    with pytest.warns(UserWarning, match="does not support masking"):  # as Keras 3's models
        out = mk.Sequential([L.Dense(2)])(np.ones((2, 4, 3), np.float32), mask=given)
    np.testing.assert_array_equal(out._keras_mask, ids > 1)  # the mask given rides on through Dense


def test_layers_that_do_not_support_masking_drop_it_with_a_warning():
    x = L.Masking()(np.array([[[1.0], [0.0]]], np.float32))
    with pytest.warns(UserWarning, match="Layer 'flat' .* does not support masking"):
        out = L.Flatten(name="flat")(x)
    assert getattr(out, "_keras_mask", None) is None


def test_causal_attention_does_not_look_ahead_and_dropout_runs_in_training_only():
    mha = L.MultiHeadAttention(2, 4, dropout=0.5, seed=1)
    x = np.random.default_rng(0).normal(size=(2, 5, 8)).astype(np.float32)
    y = mha(x, x, use_causal_mask=True)
    x2 = x.copy()
    x2[:, 3:] += 1.0
    assert_close(mha(x2, x2, use_causal_mask=True)[:, :3], y[:, :3], what="outputs before the change")
    _, scores = mha(x, x, use_causal_mask=True, return_attention_scores=True)
    assert np.all(np.triu(np.asarray(scores)[0, 0], 1) == 0)
    assert not np.allclose(mha(x, x, training=True), mha(x, x, training=False))


def test_einsum_dense_shapes_config_and_fans():
    layer = L.EinsumDense("abc,cde->abde", output_shape=(None, 4, 8), bias_axes="de", activation="relu")
    y = layer(np.ones((2, 5, 16), np.float32))
    assert (y.shape, layer.kernel.shape, layer.bias.shape) == ((2, 5, 4, 8), (16, 4, 8), (4, 8))
    assert L.EinsumDense("...b,bc->...c", 3, bias_axes="c")(np.ones((2, 7, 5), np.float32)).shape == (2, 7, 3)
    assert L.EinsumDense.from_config(layer.get_config()).get_config()["equation"] == "abc,cde->abde"
    big = L.EinsumDense("ab,bcd->acd", output_shape=(64, 64))
    big.build((None, 256))
    limit = np.sqrt(6.0 / (256 + 64 * 64))  # glorot over fan_in=256, fan_out=64*64 (Keras 3)
    values = big.kernel.numpy()
    assert values.max() <= limit and values.max() > 0.95 * limit
    with pytest.raises(ValueError, match="Invalid einsum equation 'ab->b'"):
        L.EinsumDense("ab->b", 3)
    with pytest.raises(ValueError, match="Bias dimension 'z' was requested"):
        L.EinsumDense("ab,bc->ac", 3, bias_axes="z").build((None, 2))


def test_bad_input_names_the_layer_the_argument_and_the_shapes():
    q, v = np.zeros((2, 4, 6), np.float32), np.zeros((2, 5, 6), np.float32)
    with pytest.raises(ValueError, match=r"All dimensions of `value` and `key`, except the last one, must be equal. "
                                         r"Received: value_shape=\(2, 5, 6\) and key_shape=\(2, 3, 6\)"):
        L.MultiHeadAttention(2, 3)(q, v, np.zeros((2, 3, 6), np.float32))
    mha = L.MultiHeadAttention(2, 3, name="mha")
    with pytest.raises(ValueError, match=r"'mha': `attention_mask` must be broadcastable to \(batch, target, source\) "
                                         r"= \(2, 4, 5\). Received: attention_mask.shape=\(2, 4, 6\)"):
        mha(q, v, attention_mask=np.ones((2, 4, 6), bool))
    with pytest.raises(ValueError, match=r"'mha' expects `query` of rank 3 with last dimension 6 .* received `query` "
                                         r"of shape \(2, 4, 7\)"):
        mha(np.zeros((2, 4, 7), np.float32), v)
    with pytest.raises(ValueError, match=r"'mha': `value_mask` must have the shape of its input without the last "
                                         r"axis, \(2, 5\). Received: value_mask.shape=\(2, 4\)"):
        mha(q, v, value_mask=np.ones((2, 4), bool))
    with pytest.raises(ValueError, match="invalid value for argument `num_heads`.*Received: num_heads=0"):
        L.MultiHeadAttention(0, 3)
    with pytest.raises(ValueError, match=r"Attention 'att': the query and the key must have the same last dimension. "
                                         r"Received: query shape \(2, 4, 6\), key shape \(2, 5, 7\)"):
        L.Attention(name="att")([q, np.zeros((2, 5, 7), np.float32)])
    with pytest.raises(ValueError, match=r"'att2': the value mask must have the shape of the value without its last "
                                         r"axis, \(2, 5\). Received: mask shape \(2, 4\)"):
        L.Attention(name="att2")([q, v], mask=[None, np.ones((2, 4), bool)])
    with pytest.raises(ValueError, match="Attention layer must be called on a list of inputs"):
        L.Attention()(q)
    with pytest.raises(ValueError, match=r"GlobalAveragePooling1D 'gap': `mask` must have shape \(batch, steps\) = "
                                         r"\(2, 5\). Received: mask.shape=\(2, 4\)"):
        L.GlobalAveragePooling1D(name="gap")(v, mask=np.ones((2, 4), bool))


def test_fit_and_evaluate_leave_masked_steps_out_of_the_loss_and_the_metrics():
    data = np.load(os.path.join(HERE, "masked_training.npz"))
    model = mk.Sequential([mk.Input((6,), dtype="int32"), L.Embedding(7, 4, mask_zero=True), L.Dense(5)])
    model.set_weights([data["w0"], data["w1"], data["w2"]])
    model.compile(optimizer=mk.optimizers.SGD(0.5),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    assert_close(model.evaluate(data["x"], data["y"], batch_size=4, verbose=0), data["evaluate"], rtol=1e-5,
                 what="Keras's masked loss and accuracy")
    model.train_on_batch(data["x"], data["y"])
    for i, w in enumerate(model.weights):
        assert_close(w.numpy(), data[f"trained{i}"], rtol=1e-5, atol=1e-6, what=f"{w.path} after one masked step")


def test_keras_model_file_with_mask_ops_loads():
    """Keras 3 records an Embedding's mask as a NotEqual op feeding mask=; here the mask rides on
    the tensors, so the op and the argument are left out, with the same outputs."""
    data = np.load(os.path.join(HERE, "masked_pooling.npz"))
    model = mk.saving.load_model(os.path.join(HERE, "masked_pooling.keras"))
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Embedding", "Dense",
                                                                "GlobalAveragePooling1D"]
    assert_close(model(data["x"]), data["y"], rtol=1e-5, atol=1e-6, what="masked pooling from a Keras file")


@pytest.mark.parametrize("kwargs, call", [
    ({}, {}),                                                   # the fused path (no dropout, no scores)
    ({}, {"return_attention_scores": True, "use_causal_mask": True}),
    ({"attention_axes": (1, 2)}, {"return_attention_scores": True}),  # attention over two axes
], ids=["fused", "scores_causal", "two_axes"])
def test_operand_order_switch_gives_the_same_outputs_and_gradients(monkeypatch, kwargs, call):
    from minikeras.xla_cpu import tuning
    rng = np.random.default_rng(3)
    shape = (2, 3, 4, 8) if "attention_axes" in kwargs else (2, 6, 8)
    query = rng.standard_normal(shape).astype("float32")
    value = rng.standard_normal(shape[:-1] + (5,)).astype("float32")
    results = []
    for order in (False, True):
        monkeypatch.setattr(tuning, "ATTENTION_OPERAND_ORDER", order)
        mk.random.set_seed(0)
        layer = L.MultiHeadAttention(num_heads=2, key_dim=4, value_dim=3, **kwargs)
        layer(query, value)
        if results:
            layer.set_weights(results[0][0])
        q, v = mk.Variable(query), mk.Variable(value)
        with mk.GradientTape() as tape:
            out = layer(q, v, **call)
            out = out[0] if isinstance(out, tuple) else out
            loss = mk.reduce_sum(out * out)
        grads = tape.gradient(loss, [q, v] + layer.trainable_weights)
        results.append(([w.numpy() for w in layer.weights], out.numpy(), [g.numpy() for g in grads]))
    (_, out_a, grads_a), (_, out_b, grads_b) = results
    assert_close(out_b, out_a, rtol=1e-5, atol=1e-6, what="output")
    for i, (a, b) in enumerate(zip(grads_a, grads_b)):
        assert_close(b, a, rtol=1e-5, atol=1e-6, what=f"gradient {i}")

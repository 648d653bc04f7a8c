"""fit/predict patterns of tensorflow.org's tutorials and the Keras guides, checked against TF
2.21 / Keras 3.15 on the same code: the regression tutorial's Normalization (its ``mean`` and
``variance``, a 1-D feature array for a model whose Input has a last axis of 1), a functional
model with ``outputs=[out]`` fed a dict and a plain ``y``, a Dataset of raw uint8 images, ragged
strings through the lookup layers, and the attention scores of masked queries."""
import numpy as np
import pytest

import minikeras as mk


def test_normalization_exposes_mean_and_variance_after_adapt():
    # Keras 3: axis=None on [1, 2, 3] -> mean [2.], variance [0.6666667] (shape (1,));
    # axis=-1 on [[1, 2], [3, 5]] -> mean [[2., 3.5]], variance [[1., 2.25]] (shape (1, 2))
    norm = mk.layers.Normalization(axis=None)
    norm.adapt(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(norm.mean.numpy(), [2.0], rtol=1e-6)
    np.testing.assert_allclose(norm.variance.numpy(), [2 / 3], rtol=1e-6)
    per_feature = mk.layers.Normalization()
    per_feature.adapt(np.array([[1.0, 2.0], [3.0, 5.0]]))
    np.testing.assert_allclose(per_feature.mean.numpy(), [[2.0, 3.5]], rtol=1e-6)
    np.testing.assert_allclose(per_feature.variance.numpy(), [[1.0, 2.25]], rtol=1e-6)
    given = mk.layers.Normalization(mean=[1.0, 2.0], variance=[4.0, 9.0])
    given.build((None, 2))
    np.testing.assert_allclose(given.variance.numpy(), [[4.0, 9.0]])


def test_a_one_dimensional_feature_array_fits_a_model_of_input_shape_1():
    # The regression tutorial: Normalization(input_shape=[1,], axis=None) + Dense(1), fit and
    # predict on x of shape (n,); Keras 3 adds the missing last axis
    x = np.arange(20, dtype="float64")
    y = 2 * x + 1
    norm = mk.layers.Normalization(input_shape=[1], axis=None)
    norm.adapt(x)
    model = mk.Sequential([norm, mk.layers.Dense(1)])
    model.compile(optimizer=mk.optimizers.Adam(0.1), loss="mean_absolute_error")
    history = model.fit(x, y, epochs=3, verbose=0, validation_split=0.2)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert model.predict(x[:3], verbose=0).shape == (3, 1)
    np.testing.assert_allclose(model(x[:3]).numpy(), model(x[:3, None]).numpy())


def test_functional_model_with_a_one_element_output_list_trains_on_a_dict():
    # Keras 3: outputs=[out] calls and predicts one array (unpack_singleton); fit on a dict keyed
    # by Input names with a plain y trains
    a, b = mk.Input((3,), name="a"), mk.Input((2,), name="b")
    out = mk.layers.Dense(1)(mk.layers.Concatenate()([a, b]))
    model = mk.Model(inputs=[a, b], outputs=[out])
    model.compile("adam", "mse", metrics=["mae"])
    x = {"a": np.ones((8, 3), "float32"), "b": np.ones((8, 2), "float32")}
    history = model.fit(x, np.ones((8, 1), "float32"), epochs=1, verbose=0)
    assert sorted(history.history) == ["loss", "mae"]
    assert isinstance(model(x), mk.Tensor) and model.predict(x, verbose=0).shape == (8, 1)
    assert len(model.outputs) == 1


def test_fit_casts_a_dataset_of_uint8_images_to_the_float_input():
    images = np.random.default_rng(0).integers(0, 255, (16, 4, 4, 1)).astype("uint8")
    labels = np.arange(16) % 3
    dataset = mk.data.Dataset.from_tensor_slices((images, labels)).batch(8)
    for model in (mk.Sequential([mk.Input((4, 4, 1)), mk.layers.Flatten(), mk.layers.Dense(3)]),
                  mk.Sequential([mk.layers.Rescaling(1 / 255, input_shape=(4, 4, 1)), mk.layers.Flatten(),
                                 mk.layers.Dense(3)])):
        model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(dataset, epochs=1, verbose=0)
        assert np.isfinite(model.evaluate(dataset, verbose=0))
        assert model.predict(dataset, verbose=0).shape == (16, 3)


def test_string_layers_take_and_give_ragged_tensors():
    # The text-generation tutorial, TF 2.21: ids_from_chars(tf.strings.unicode_split(texts, "UTF-8"))
    # is <tf.RaggedTensor [[1, 2, 3], [4, 5]]>; the inverted lookup gives the characters back, and
    # reduce_join(axis=-1) the texts
    chars = mk.strings.unicode_split(mk.constant(["abc", "xy"]), "UTF-8")
    ids_from_chars = mk.layers.StringLookup(vocabulary=list("abcxyz"), mask_token=None)
    ids = ids_from_chars(chars)
    assert isinstance(ids, mk.RaggedTensor) and ids.to_list() == [[1, 2, 3], [4, 5]]
    chars_from_ids = mk.layers.StringLookup(vocabulary=ids_from_chars.get_vocabulary(), invert=True, mask_token=None)
    back = chars_from_ids(ids)
    assert isinstance(back, mk.RaggedTensor) and back.to_list() == [[b"a", b"b", b"c"], [b"x", b"y"]]
    assert mk.strings.reduce_join(back, axis=-1).numpy().tolist() == [b"abc", b"xy"]
    assert mk.strings.reduce_join(back).numpy() == b"abcxy"
    numbers = mk.RaggedTensor.from_row_lengths(np.array([7, 8, 9]), [1, 2])
    assert mk.layers.IntegerLookup(vocabulary=[7, 8, 9])(numbers).to_list() == [[1], [2, 3]]
    hashed = mk.layers.Hashing(num_bins=4)(chars)
    assert isinstance(hashed, mk.RaggedTensor) and hashed.row_lengths().numpy().tolist() == [3, 2]
    multi_hot = mk.layers.StringLookup(vocabulary=list("abc"), output_mode="multi_hot")
    with pytest.raises(TypeError, match="RaggedTensor only with output_mode='int'.*to_tensor"):
        multi_hot(chars)


def test_attention_scores_of_a_masked_query_row_are_zero_as_keras_3():
    # Keras 3.15 (TensorFlow and JAX backends): its masked Softmax multiplies the probabilities by the
    # mask, so a query position whose row is all masked has scores summing to 0, the others to 1
    x = np.random.default_rng(0).random((1, 3, 4)).astype("float32")
    x[0, 2] = 0
    inputs = mk.Input((3, 4))
    masked = mk.layers.Masking()(inputs)
    _, scores = mk.layers.MultiHeadAttention(num_heads=1, key_dim=4)(masked, masked, return_attention_scores=True)
    sums = mk.Model(inputs, scores).predict(x, verbose=0).sum(-1)
    np.testing.assert_allclose(sums, [[[1, 1, 0]]], atol=1e-6)
    explicit = np.array([[[1, 1, 0], [1, 0, 0], [0, 0, 0]]], bool)
    _, scores = mk.layers.MultiHeadAttention(num_heads=1, key_dim=4)(x, x, attention_mask=explicit,
                                                                      return_attention_scores=True)
    np.testing.assert_allclose(scores.numpy().sum(-1), [[[1, 1, 0]]], atol=1e-6)

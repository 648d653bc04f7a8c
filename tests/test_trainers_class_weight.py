"""class_weight_to_sample_weights against Keras 3's rule, written out in NumPy."""
import numpy as np
import pytest

from minikeras.trainers.class_weight import class_weight_to_sample_weights

WEIGHTS = {0: 2.0, 2: 0.5}


def test_integer_labels_take_their_class_weight_and_missing_classes_weigh_one():
    np.testing.assert_array_equal(class_weight_to_sample_weights(np.array([0, 1, 2, 3]), WEIGHTS), [2.0, 1.0, 0.5, 1.0])


def test_one_hot_rows_use_their_argmax_and_column_labels_are_rounded():
    one_hot = np.eye(3)[[2, 0, 1]]
    np.testing.assert_array_equal(class_weight_to_sample_weights(one_hot, WEIGHTS), [0.5, 2.0, 1.0])
    column = np.array([[0.2], [1.6], [0.0]])  # rounded: 0, 2, 0
    np.testing.assert_array_equal(class_weight_to_sample_weights(column, WEIGHTS), [2.0, 0.5, 2.0])
    assert class_weight_to_sample_weights(column, WEIGHTS).dtype == np.float32


def test_bad_uses_are_refused_as_in_keras():
    with pytest.raises(ValueError, match="class_weight` and `sample_weight"):
        class_weight_to_sample_weights(np.array([0]), WEIGHTS, sample_weight=np.ones(1))
    with pytest.raises(ValueError, match="single output"):
        class_weight_to_sample_weights([np.array([0]), np.array([1])], WEIGHTS)
    with pytest.raises(TypeError, match="must be a dict"):
        class_weight_to_sample_weights(np.array([0]), [2.0, 1.0])


def test_fit_on_a_dataset_weighs_each_batch_as_on_arrays():
    # Keras 3 maps class weights into a Dataset's batches: the same losses and weights as on arrays
    import minikeras as mk
    x = np.random.default_rng(0).normal(size=(8, 3)).astype("float32")
    y = np.array([0, 1] * 4)

    def fit(data, **kwargs):
        mk.random.set_seed(1)
        model = mk.Sequential([mk.layers.Dense(2, activation="softmax")])
        model.compile("sgd", "sparse_categorical_crossentropy")
        history = model.fit(*data, class_weight={0: 1.0, 1: 3.0}, verbose=0, epochs=2, **kwargs)
        return history.history["loss"], model.get_weights()[0]

    on_dataset = fit((mk.data.Dataset.from_tensor_slices((x, y)).batch(4),))
    on_arrays = fit((x, y), batch_size=4, shuffle=False)
    np.testing.assert_allclose(on_dataset[0], on_arrays[0], rtol=1e-6)
    np.testing.assert_allclose(on_dataset[1], on_arrays[1], rtol=1e-6)
    unweighted = mk.Sequential([mk.layers.Dense(2, activation="softmax")])
    unweighted.compile("sgd", "sparse_categorical_crossentropy")
    weighted_ds = mk.data.Dataset.from_tensor_slices((x, y, np.ones(8, "float32"))).batch(4)
    with pytest.raises(ValueError, match="class_weight` and `sample_weight` at the same time"):
        unweighted.fit(weighted_ds, class_weight={0: 1.0}, verbose=0)


def test_class_weight_needs_one_class_per_sample():
    with pytest.raises(ValueError, match=r"one class per sample.*\(2, 3, 4\)"):
        class_weight_to_sample_weights(np.zeros((2, 3, 4)), {1: 2.0})


def test_class_weight_of_many_samples_matches_a_lookup_per_sample():
    labels = np.random.default_rng(0).integers(0, 7, size=1000)
    table = {0: 0.5, 3: 2.0, 6: 4.0}
    expected = np.array([table.get(int(c), 1.0) for c in labels], dtype="float32")
    got = class_weight_to_sample_weights(labels, table)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)

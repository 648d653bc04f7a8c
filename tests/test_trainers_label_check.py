"""Sparse class labels outside [0, classes) raise TensorFlow's InvalidArgumentError (TF on the
CPU: "Received a label value of 7 which is outside the valid range of [0, 3).  Label values:
0 7 1"), naming the value, its position and the number of classes: in eager loss calls, and
once per fit/evaluate for labels held in memory, before any step trains on them."""
import numpy as np
import pytest

import minikeras as mk

PROBS = np.full((3, 3), 1 / 3, np.float32)


@pytest.mark.parametrize("bad", [7, -1])
def test_eager_loss_calls_name_value_position_and_classes(bad):
    message = (rf"label value of {bad} at position 1 of labels which is outside the valid range of \[0, 3\) "
               r"\(y_pred has 3 classes\)\.  Label values: 0 " + str(bad) + " 1")
    with pytest.raises(mk.errors.InvalidArgumentError, match=message):
        mk.losses.SparseCategoricalCrossentropy()(np.array([0, bad, 1]), PROBS)
    with pytest.raises(mk.errors.InvalidArgumentError, match=message):
        mk.losses.sparse_categorical_crossentropy(np.array([0, bad, 1]), PROBS)


def test_position_in_labels_of_several_dimensions_and_ignore_class():
    labels = np.array([[0, 1], [2, 3]])
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"value of 3 at position \(1, 1\)"):
        mk.losses.SparseCategoricalCrossentropy()(labels, np.full((2, 2, 3), 1 / 3, np.float32))
    ignoring = mk.losses.SparseCategoricalCrossentropy(ignore_class=-1)  # the ignored value is no error
    np.testing.assert_allclose(ignoring(np.array([0, -1, 1]), PROBS).numpy(), np.log(3.0), rtol=1e-6)


@pytest.fixture(scope="module")
def model():
    mk.random.set_seed(0)
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(3)])
    model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


X = np.ones((4, 2), np.float32)


def test_fit_and_evaluate_check_in_memory_labels_before_training(model):
    before = [w.numpy() for w in model.weights]
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"value of 7 at position 2 of fit's y .*\[0, 3\)"):
        model.fit(X, np.array([0, 1, 7, 2]), verbose=0)
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"value of -1 at position 0 of fit's validation"):
        model.fit(X, np.array([0, 1, 2, 2]), validation_data=(X, np.array([-1, 0, 0, 0])), verbose=0)
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"value of 3 at position 3 of evaluate's y"):
        model.evaluate(X, np.array([[0], [1], [2], [3]]), verbose=0)
    for w, b in zip(model.weights, before):
        np.testing.assert_array_equal(w.numpy(), b)  # nothing trained


def test_string_loss_and_valid_labels_train(model):
    model.compile("sgd", "sparse_categorical_crossentropy")
    with pytest.raises(mk.errors.InvalidArgumentError, match="value of 3 at position 0 of fit's y"):
        model.fit(X, mk.constant([3, 0, 0, 0]), verbose=0)
    model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert np.isfinite(model.fit(X, np.array([0, 1, 2, 2]), verbose=0).history["loss"][0])

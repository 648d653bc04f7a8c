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

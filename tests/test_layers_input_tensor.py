"""mk.Input(tensor=...) as Keras 3's: a KerasTensor becomes a model input (the same tensor,
its other arguments checked against it); anything else is refused with Keras's error. The
messages were checked against Keras 3.15.1 on JAX (Keras's, plus the values received)."""
import numpy as np
import pytest

import minikeras as mk


def test_a_keras_tensor_is_adopted_as_an_input():
    features = mk.Input((4,))
    hidden = mk.layers.Dense(3)(features)
    adopted = mk.Input(tensor=hidden, shape=(3,), batch_size=None, dtype="float32")
    assert adopted is hidden
    model = mk.Model(adopted, mk.layers.Dense(2, kernel_initializer="ones")(adopted))
    assert model.input_shape == (None, 3)
    assert len(model.layers) == 2  # the new InputLayer and the Dense: the first Dense is not part of it
    np.testing.assert_allclose(model(np.ones((2, 3), np.float32)), np.full((2, 2), 3.0))


@pytest.mark.parametrize("kwargs, message", [
    ({"shape": (5,)}, "incompatible `shape` argument. Received: shape=(5,)"),
    ({"batch_size": 8}, "incompatible `batch_size` argument. Received: batch_size=8"),
    ({"batch_shape": (None, 5)}, "incompatible `batch_shape` argument. Received: batch_shape=(None, 5)"),
    ({"dtype": "int32"}, "incompatible `dtype` argument. Received: dtype=int32, input_tensor.dtype=float32"),
])
def test_arguments_that_disagree_with_the_tensor_are_refused(kwargs, message):
    with pytest.raises(ValueError, match="When providing the `input_tensor` argument, you cannot provide an") as info:
        mk.Input(tensor=mk.Input((3,)), **kwargs)
    assert message in str(info.value)


@pytest.mark.parametrize("tensor", [np.zeros((2, 3), np.float32), mk.constant([1.0, 2.0]), 5],
                         ids=["numpy", "Tensor", "int"])
def test_a_concrete_tensor_is_refused_as_keras_refuses_it(tensor):
    with pytest.raises(ValueError, match=r"(?s)Argument `input_tensor` must be a KerasTensor. Received invalid type: "
                                         r"input_tensor=.* \(of type <class"):
        mk.Input(tensor=tensor)

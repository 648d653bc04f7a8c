"""keras.layers.InputSpec and keras.layers.Wrapper, as Keras 3.15 has them.

The error messages are Keras 3's, copied from the reference (the same layers and inputs run
with Keras 3.15.1 on JAX).
"""
import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk
from minikeras import keras

L = mk.layers


class _Probe(L.Layer):
    """A layer that returns its input, with the given input_spec."""

    def __init__(self, spec, **kwargs):
        super().__init__(**kwargs)
        self.input_spec = spec

    def call(self, inputs):
        return inputs


def _zeros(*shape):
    return np.zeros(shape, np.float32)


WHERE = "Input 0 with name 'None' of layer 'probe' is incompatible with the layer: "
KERAS_MESSAGES = [
    (keras.InputSpec(ndim=3), _zeros(2, 4), WHERE + "expected ndim=3, found ndim=2. Full shape received: (2, 4)"),
    (keras.InputSpec(min_ndim=3), _zeros(2, 4),
     WHERE + "expected min_ndim=3, found ndim=2. Full shape received: (2, 4)"),
    (keras.InputSpec(max_ndim=2), _zeros(2, 4, 1), WHERE + "expected max_ndim=2, found ndim=3"),
    (keras.InputSpec(dtype="int32"), _zeros(2, 4), WHERE + "expected dtype=int32, found dtype=float32"),
    (keras.InputSpec(axes={-1: 4}), _zeros(2, 3),
     WHERE + "expected axis -1 of input shape to have value 4, but received input with shape (2, 3)"),
    (keras.InputSpec(shape=(None, 5)), _zeros(2, 3), WHERE + "expected shape=(None, 5), found shape=(2, 3)"),
    ([keras.InputSpec(ndim=2, name="a"), keras.InputSpec(ndim=2, name="b")], {"a": _zeros(2, 3)},
     "Missing data for input \"b\". You passed a data dictionary with keys ['a']. Expected the following keys: "
     "['a', 'b']"),
]


@pytest.mark.parametrize("spec, x, message", KERAS_MESSAGES, ids=range(len(KERAS_MESSAGES)))
def test_a_mismatched_input_is_refused_with_keras_s_message(spec, x, message):
    with pytest.raises(ValueError) as raised:
        _Probe(spec, name="probe")(x)
    assert str(raised.value) == message


def test_the_number_of_inputs_is_checked():
    with pytest.raises(ValueError, match=r'Layer "probe" expects 2 input\(s\), but it received 1 input tensors'):
        _Probe([keras.InputSpec(ndim=2), keras.InputSpec(ndim=2)], name="probe")(_zeros(2, 3))


def test_compatible_inputs_pass_and_symbolic_inputs_are_checked_with_their_unknown_batch():
    probe = _Probe(keras.InputSpec(shape=(None, 28, 28, 1), allow_last_axis_squeeze=True), name="probe")
    assert probe(_zeros(2, 28, 28)).shape == (2, 28, 28)
    assert probe(_zeros(2, 28, 28, 1)).shape == (2, 28, 28, 1)
    assert probe(mk.Input((28, 28))).shape == (None, 28, 28)
    with pytest.raises(ValueError, match=r"expected shape=\(None, 28, 28, 1\), found shape=\(None, 28, 27\)"):
        probe(mk.Input((28, 27)))
    named = _Probe([keras.InputSpec(ndim=2, name="a"), keras.InputSpec(ndim=3, name="b")])
    out = named({"b": _zeros(1, 2, 3), "a": _zeros(1, 2)})
    assert set(out) == {"a", "b"}
    assert _Probe([keras.InputSpec(ndim=2), None])([_zeros(1, 2), _zeros(1)])[1].shape == (1,)
    assert _Probe(keras.InputSpec(dtype="int32"))(np.zeros((2,), np.int32)).dtype == mk.int32


def test_a_spec_set_in_build_is_checked_after_build():
    class Built(L.Layer):
        def build(self, input_shape):
            self.input_spec = keras.InputSpec(min_ndim=2, axes={-1: input_shape[-1]})
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")

        def call(self, inputs):
            return inputs * self.w
    layer = Built(name="built")
    assert_close(layer(np.ones((2, 3), np.float32)), np.ones((2, 3)), what="built layer")
    with pytest.raises(ValueError, match="of layer 'built' .* expected axis -1 of input shape to have value 3, but "
                                         r"received input with shape \(2, 4\)"):
        layer(np.ones((2, 4), np.float32))


def test_input_spec_repr_config_and_bad_arguments_as_keras():
    assert repr(keras.InputSpec(min_ndim=2, axes={-1: 4})) == "InputSpec(min_ndim=2, axes={-1: 4})"
    spec = keras.InputSpec(shape=(None, 3), dtype="float32")
    assert repr(spec) == "InputSpec(dtype=float32, shape=(None, 3), ndim=2)"
    assert spec.get_config() == {"dtype": "float32", "shape": (None, 3), "ndim": 2, "max_ndim": None,
                                 "min_ndim": None, "axes": {}, "optional": False}
    assert repr(keras.InputSpec.from_config(spec.get_config())) == repr(spec)
    with pytest.raises(ValueError, match="Axis 3 is greater than the maximum allowed value: 1"):
        keras.InputSpec(ndim=2, axes={3: 1})
    with pytest.raises(TypeError, match=r"Argument `axes` must be a dict with integer keys. Received: axes=\{'x': 1\}"):
        keras.InputSpec(axes={"x": 1})
    with pytest.raises(TypeError, match="Layer 'odd' has an invalid input_spec: expected InputSpec objects"):
        _Probe("rank 2", name="odd")(_zeros(2))
    assert keras.layers.InputSpec is keras.InputSpec is L.InputSpec


class _Twice(L.Wrapper):
    """Applies the wrapped layer twice."""

    def call(self, inputs):
        return self.layer(self.layer(inputs))


def test_wrapper_builds_its_layer_keeps_it_in_its_config_and_is_time_distributed_s_base():
    wrapper = _Twice(L.Dense(3, use_bias=False, kernel_initializer="identity"), name="twice")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_close(wrapper(x), x, what="identity twice")
    assert wrapper.layer.built and [w.path for w in wrapper.weights] == [wrapper.layer.kernel.path]
    config = wrapper.get_config()
    assert config["layer"]["class_name"] == "Dense" and config["layer"]["config"]["units"] == 3
    clone = _Twice.from_config(config)
    assert isinstance(clone.layer, L.Dense) and clone.name == "twice" and clone.layer is not wrapper.layer
    assert issubclass(L.TimeDistributed, keras.layers.Wrapper)
    assert isinstance(L.TimeDistributed(L.Dense(2)).layer, L.Dense)
    with pytest.raises(ValueError, match="Layer 3 supplied to Wrapper isn't a supported layer type"):
        _Twice(3)

"""keras.layers.serialize / deserialize: a layer to Keras 3's dict and back, and the dict Keras 3
itself writes (its module names) read as a .keras file's."""
import pytest

from minikeras import keras


def test_round_trip_and_keras_dicts():
    layer = keras.layers.Dense(3, activation="relu", name="d")
    again = keras.layers.deserialize(keras.layers.serialize(layer))
    assert type(again) is keras.layers.Dense and again.get_config() == layer.get_config()
    # what keras.layers.serialize(keras.layers.Conv2D(4, 3, name="c")) gives in Keras 3.15 (abridged)
    written = {"module": "keras.layers", "class_name": "Conv2D", "registered_name": None,
               "config": {"name": "c", "trainable": True, "dtype": {"module": "keras", "class_name": "DTypePolicy",
                                                                    "config": {"name": "float32"},
                                                                    "registered_name": None},
                          "filters": 4, "kernel_size": [3, 3], "strides": [1, 1], "padding": "valid"}}
    conv = keras.layers.deserialize(written)
    assert type(conv) is keras.layers.Conv2D and conv.filters == 4 and conv.name == "c"
    assert type(keras.layers.deserialize({"class_name": "Dropout", "config": {"rate": 0.5}})) is keras.layers.Dropout
    with pytest.raises(ValueError, match="Unknown layer class 'Nope'"):
        keras.layers.deserialize({"class_name": "Nope", "config": {}})
    with pytest.raises(ValueError, match="expects a dict with 'class_name'"):
        keras.layers.deserialize("Dense")

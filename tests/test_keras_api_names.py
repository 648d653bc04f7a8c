"""Keras 3.15's public names (``tests/fixtures/keras_api_names/names.json.gz``, by
``make_fixtures.py`` there) against ``from minikeras import keras``: every name is there but those
listed below, each with the reason it is left out (docs/keras3.md, "Keras 3 names left out").
A name built since must leave the list (the second test says which)."""
import gzip
import json
import os

from minikeras import keras

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_api_names", "names.json.gz")

QUANTIZATION = "quantization (int8/int4/float8, GPTQ, AWQ) is not built"
BACKEND_WRAPPER = "wraps another framework's module (Flax, JAX stateless functions, a TF SavedModel, PyTorch)"

LEFT_OUT = {
    "keras.Quantizer": QUANTIZATION,
    "keras.quantizers": QUANTIZATION,
    "keras.dtype_policies.AWQDTypePolicy": QUANTIZATION,
    "keras.dtype_policies.GPTQDTypePolicy": QUANTIZATION,
    "keras.dtype_policies.Int4DTypePolicy": QUANTIZATION,
    "keras.dtype_policies.QuantizedDTypePolicy": QUANTIZATION,
    "keras.dtype_policies.QuantizedFloat8DTypePolicy": QUANTIZATION,
    "keras.export": "writes TensorFlow SavedModels (or ONNX) through TensorFlow or jax2tf",
    "keras.layers.FlaxLayer": BACKEND_WRAPPER,
    "keras.layers.JaxLayer": BACKEND_WRAPPER,
    "keras.layers.TFSMLayer": BACKEND_WRAPPER,
    "keras.layers.TorchModuleWrapper": BACKEND_WRAPPER,
    "keras.SymbolicScope": "nothing in minikeras would behave differently inside it (docs/keras3.md)",
    "keras.callbacks.OrbaxCheckpoint": "needs orbax-checkpoint; ModelCheckpoint and BackupAndRestore cover saving",
}


def _keras_names():
    with gzip.open(FIXTURE, "rt") as f:
        data = json.load(f)
    assert data["keras_version"] == "3.15.1"
    return data["modules"]


def _missing():
    """Keras's names minikeras lacks; a missing module counts once, not with each of its names."""
    missing = set()
    for module, names in _keras_names().items():
        obj, path = keras, "keras"
        for part in module.split(".")[1:]:
            path = f"{path}.{part}"
            if not hasattr(obj, part):
                break
            obj = getattr(obj, part)
        else:
            missing.update(f"{module}.{name}" for name in names if not hasattr(obj, name))
            continue
        missing.add(path)
    return {name for name in missing if not any(name.startswith(m + ".") for m in missing)}


def test_every_keras_name_is_there_or_left_out_with_a_reason():
    unexplained = sorted(_missing() - set(LEFT_OUT))
    assert not unexplained, f"Keras 3.15 names missing from minikeras.keras, not listed as left out: {unexplained}"


def test_names_left_out_are_still_missing():
    built = sorted(set(LEFT_OUT) - _missing())
    assert not built, f"these names exist now; remove them from LEFT_OUT and from docs/keras3.md: {built}"

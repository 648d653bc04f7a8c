"""keras.utils' small names (Config, get_source_inputs, is_keras_tensor, standardize_dtype,
clear_session) against Keras 3's answers (tests/fixtures/keras_utils_names/, with its script)."""
import json
from pathlib import Path

import numpy as np
import pytest

import minikeras as mk
from minikeras.keras import utils

EXPECTED = json.loads((Path(__file__).parent / "fixtures" / "keras_utils_names" / "expected.json").read_text())
DTYPES = {"None": None, "int": int, "float": float, "bool": bool, "str": str, "complex": complex,
          "np.float32": np.float32, "np.dtype('int16')": np.dtype("int16"), "3": 3}


def answer(fn, *args):
    try:
        return {"value": fn(*args)}
    except Exception as error:  # noqa: BLE001 - compared with what Keras raised
        return {"error": type(error).__name__, "message": str(error)}


@pytest.mark.parametrize("label", list(EXPECTED["standardize_dtype"]))
def test_standardize_dtype_as_keras(label):
    value = DTYPES[label] if label in DTYPES else label.strip("'")
    assert answer(utils.standardize_dtype, value) == EXPECTED["standardize_dtype"][label]


def test_standardize_dtype_of_minikeras_dtypes():
    assert utils.standardize_dtype(mk.bfloat16) == "bfloat16"
    assert utils.standardize_dtype(mk.string) == "string"  # tf.string's place: NumPy's object dtype
    assert utils.standardize_dtype(mk.int32) == "int32"
    assert mk.keras.backend.standardize_dtype is utils.standardize_dtype


def test_get_source_inputs_as_keras():
    a, b, c = (mk.Input((3,), name=n) for n in "abc")
    d = mk.layers.Dense(3)(b)
    s = mk.layers.Add()([d, a])
    cat = mk.layers.Concatenate()([c, s, a])
    inner = mk.Model([a, b], s)
    e, f = mk.Input((3,), name="e"), mk.Input((3,), name="f")
    graphs = {"a": a, "dense(b)": d, "add(dense(b), a)": s, "concat(c, add, a)": cat,
              "model(f, e)": inner([f, e]), "add(a, a)": mk.layers.Add()([a, a])}
    names = {id(t): n for n, t in zip("abcef", (a, b, c, e, f))}
    got = {label: [names[id(t)] for t in utils.get_source_inputs(t)] for label, t in graphs.items()}
    assert got == EXPECTED["get_source_inputs"]
    array = np.ones(2)
    assert utils.get_source_inputs(array) is array


def test_is_keras_tensor():
    x = mk.Input((2,))
    assert utils.is_keras_tensor(x) and utils.is_keras_tensor(x * 2)
    assert not utils.is_keras_tensor(mk.constant([1.0])) and not utils.is_keras_tensor(np.ones(2))


def test_clear_session_resets_names():
    utils.clear_session()
    assert mk.layers.Dense(1).name == "dense" and mk.layers.Dense(1).name == "dense_1"
    utils.clear_session(free_memory=False)
    assert mk.layers.Dense(1).name == "dense"


def test_config_as_keras():
    expected = EXPECTED["config"]
    c = utils.Config(learning_rate=0.1, momentum=0.9)
    c.seed = 123
    c["zeta"] = [1, 2]
    got = {"repr": repr(c), "json": c.to_json(), "iter": list(c), "keys": list(c.keys()), "len": len(c),
           "seed": c.seed, "get_missing": c.get("nope", 7), "contains": "seed" in c}
    got["unknown"] = answer(lambda: c.lerning_rate)
    got["unknown_far"] = answer(lambda: c.xyz)
    c.freeze()
    assert c.frozen
    got["frozen_set"] = answer(lambda: setattr(c, "seed", 1))
    got["frozen_item"] = answer(lambda: c.__setitem__("seed", 1))
    got["frozen_pop"] = answer(lambda: c.pop("seed"))
    c.unfreeze()
    got["popped"] = c.pop("seed")
    got["as_dict"] = c.as_dict()
    assert got == expected

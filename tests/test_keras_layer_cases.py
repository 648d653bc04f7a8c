"""Keras 3's own layer test cases, run on minikeras through ``keras_layer_harness.run_layer_test``.

``tests/fixtures/keras_layer_cases/cases.json`` holds the arguments of every ``run_layer_test``
call in Keras 3.15's ``keras/src/layers/<family>/*_test.py`` for the ten families (core,
activations, convolutional, pooling, normalization, regularization, reshaping, merging, rnn,
attention), recorded by ``record_cases.py`` there: Keras's layer classes by name, Keras objects
as class name and config; here each is rebuilt from minikeras's classes (the classes and
functions Keras's test files define are ported in ``keras_layer_test_objects.py``) and checked.
A large random input (Keras's Cropping3D volumes) is recorded as its seed and shape and drawn
again here (``"__random__"``: ``np.random.RandomState(seed).random_sample(shape)``), its
expected crop as a block of that draw (``"__block__"``). A case whose arguments Keras's
constructor refuses (``"raises"``) must be refused here too, with the same exception type.
``KNOWN_FAILURES`` lists the cases that do not pass yet, with the reason (strict: one that
starts to pass fails the run, so the list stays true); it is empty: all 339 cases run pass.

Left out, and why:

- quantization (``quantize`` tests, int4/int8/float8 dtype policies; 14 cases): minikeras has
  no quantized layers;
- sparse or ragged inputs or outputs (``input_sparse``, ``input_ragged``...; 27 cases):
  minikeras's layers take neither;
- what a case checks about Keras's backend itself: the seed-generator count
  (``expected_num_seed_generators``; minikeras's random layers draw from the global generator),
  torch parameters and TPU tolerances.

A case of a layer class that ``mk.layers`` does not have yet is skipped with that reason, so it
runs by itself once the class lands.
"""
import json
import os

import numpy as np
import pytest
from keras_layer_harness import run_layer_test
from keras_layer_test_objects import TEST_OBJECTS

import minikeras as mk
from minikeras.saving import keras_config

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_layer_cases")
with open(os.path.join(HERE, "cases.json")) as f:
    CASES = json.load(f)
ARRAYS = np.load(os.path.join(HERE, "arrays.npz"))

FAMILIES = ("core/", "activations/", "convolutional/", "pooling/", "normalization/", "regularization/",
            "reshaping/", "merging/", "rnn/", "attention/")
LEFT_OUT = ("input_sparse", "input_ragged", "expected_output_sparse", "expected_output_ragged")
# Keras classes exported under another name (keras.layers.GroupQueryAttention is GroupedQueryAttention)
KERAS_EXPORT_NAMES = {"GroupedQueryAttention": "GroupQueryAttention"}
QUANTIZED_DTYPES = ("int4", "int8", "float8", "gptq", "awq")
KNOWN_FAILURES = {}


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(_decode(v) for v in value["__tuple__"])
    if "__dict__" in value:
        return {k: _decode(v) for k, v in value["__dict__"].items()}
    if "__array__" in value:
        return ARRAYS[value["__array__"]]
    if "__random__" in value:  # a test's np.random.rand draw, regenerated from the recorder's seed
        spec = value["__random__"]
        return np.random.RandomState(spec["seed"]).random_sample(spec["shape"]).astype(spec["dtype"])
    if "__block__" in value:  # a block of such a draw (Keras's expected crop), in its dtype
        spec = value["__block__"]
        whole = _decode(spec["of"])
        index = tuple(slice(start, start + n) for start, n in zip(spec["start"], spec["shape"]))
        return whole[index].astype(spec["dtype"])
    if "__dtype__" in value:
        return value["__dtype__"]
    if "__callable__" in value:
        return TEST_OBJECTS.get(value["__callable__"], value["__callable__"])
    if "__class__" in value:
        return TEST_OBJECTS[value["__class__"]]
    spec = value["__object__"]
    config = _decode(spec["config"])
    if spec["class_name"] in TEST_OBJECTS:
        return TEST_OBJECTS[spec["class_name"]].from_config(config)
    if spec["kind"] == "layers":  # through the .keras translation, which drops Keras's keys without effect here
        spec = keras_config.from_keras({"module": "keras.layers", "class_name": spec["class_name"],
                                        "config": config, "registered_name": None}, custom_objects=TEST_OBJECTS)
        with mk.saving.custom_object_scope(TEST_OBJECTS):
            return mk.saving.deserialize_keras_object(spec)
    namespace = {"initializers": mk.initializers, "regularizers": mk.regularizers,
                 "constraints": mk.constraints}.get(spec["kind"])
    if namespace is None:
        raise NotImplementedError(f"no minikeras {spec['kind']} for {spec['class_name']}")
    return namespace.get({"class_name": spec["class_name"], "config": config})


def _ours(case):
    return case["test"].startswith(FAMILIES) and "unrecordable" not in case


SELECTED = [case for case in CASES if _ours(case)]
IDS = []
for case in SELECTED:
    base = case["test"].split("::", 1)[1].replace("::", ".")
    name, n = base, 1
    while name in IDS:
        n += 1
        name = f"{base}#{n}"
    IDS.append(name)


@pytest.mark.parametrize("case", [
    pytest.param(case, id=case_id, marks=pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[case_id])
                 if case_id in KNOWN_FAILURES else ())
    for case, case_id in zip(SELECTED, IDS)])
def test_keras_layer_case(case):
    reason = _left_out(case)
    if reason:
        pytest.skip(reason)
    name = KERAS_EXPORT_NAMES.get(case["layer"], case["layer"])
    layer_cls = getattr(mk.layers, name, None) or TEST_OBJECTS.get(name)
    if layer_cls is None:
        pytest.skip(f"mk.layers has no {name} yet")
    kwargs = _decode(case["kwargs"])
    for key in LEFT_OUT + ("tpu_atol", "tpu_rtol"):
        kwargs.pop(key, None)
    # Keras finds its test files' classes by module; here they are custom objects
    kwargs["custom_objects"] = {**TEST_OBJECTS, **(kwargs.get("custom_objects") or {})}
    if "raises" in case:  # Keras's constructor refuses these arguments; minikeras's must too
        expected = {"ValueError": ValueError, "TypeError": TypeError}[case["raises"]["type"]]
        with pytest.raises(expected):
            run_layer_test(layer_cls, _decode(case["init_kwargs"]), **kwargs)
        return
    run_layer_test(layer_cls, _decode(case["init_kwargs"]), **kwargs)


def _left_out(case):
    """Why ``case`` is left out (quantization, sparse or ragged tensors), or None."""
    raw = json.dumps(case)
    dtype = case["init_kwargs"]["__dict__"].get("dtype")
    if "quantiz" in case["test"] or (isinstance(dtype, str) and dtype.startswith(QUANTIZED_DTYPES)):
        return "quantization: left out (minikeras has no quantized layers)"
    if any(f'"{key}": true' in raw for key in LEFT_OUT) or '"__sparse__"' in raw:
        return "sparse or ragged tensors: left out"
    return None

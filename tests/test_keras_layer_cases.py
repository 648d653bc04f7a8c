"""Keras 3's own layer test cases, run on minikeras through ``keras_layer_harness.run_layer_test``.

``tests/fixtures/keras_layer_cases/cases.json`` holds the arguments of every ``run_layer_test``
call in Keras 3.15's ``keras/src/layers/**/*_test.py`` (recorded by ``record_cases.py`` there),
with Keras's layer classes named and Keras objects given as class name and config; here each
is rebuilt from minikeras's classes and checked. Only the families whose layers issue 39's layer
work added run here (convolutional, pooling, the padding/cropping/upsampling layers, group/RMS/
unit/spectral normalization, the regularization layers, PReLU); ``KNOWN_FAILURES`` lists the
case(s) that do not pass yet, with the reason (strict: one that starts to pass fails the run,
so the list stays true). Cases with sparse or ragged inputs are left out (minikeras has neither
for these layers).
"""
import json
import os

import numpy as np
import pytest
from keras_layer_harness import run_layer_test

import minikeras as mk
from minikeras.saving import keras_config

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_layer_cases")
with open(os.path.join(HERE, "cases.json")) as f:
    CASES = json.load(f)
ARRAYS = np.load(os.path.join(HERE, "arrays.npz"))

FAMILIES = ("convolutional/", "pooling/", "reshaping/cropping", "reshaping/up_sampling", "reshaping/zero_padding",
            "normalization/group_normalization", "normalization/rms_normalization",
            "normalization/unit_normalization", "normalization/spectral_normalization", "regularization/",
            "activations/prelu")
LEFT_OUT = ("input_sparse", "input_ragged", "expected_output_sparse", "expected_output_ragged")
KNOWN_FAILURES = {
    "ConvBasicTest.test_lora_rank_argument": "LoRA (lora_rank) is not supported by minikeras's convolutions",
}


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
    if "__dtype__" in value:
        return value["__dtype__"]
    if "__callable__" in value:
        return value["__callable__"]
    spec = value["__object__"]
    config = _decode(spec["config"])
    if spec["kind"] == "layers":  # through the .keras translation, which drops Keras's keys without effect here
        spec = keras_config.from_keras({"module": "keras.layers", "class_name": spec["class_name"],
                                        "config": config, "registered_name": None})
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
    kwargs = _decode(case["kwargs"])
    if any(kwargs.pop(key, False) for key in LEFT_OUT):
        pytest.skip("sparse or ragged tensors: left out")
    kwargs.pop("tpu_atol", None)
    kwargs.pop("tpu_rtol", None)
    layer_cls = getattr(mk.layers, case["layer"], None)
    assert layer_cls is not None, f"mk.layers has no {case['layer']}"
    run_layer_test(layer_cls, _decode(case["init_kwargs"]), **kwargs)

"""mk.applications predict what Keras 3 predicts for the same weights file.

For each case of tests/fixtures/keras_applications (made by make_fixtures.py there with Keras 3.15
on JAX), the weight file Keras publishes an application's ImageNet weights as (legacy HDF5,
``layer_names``/``weight_names``) is written again from the recorded structure and the seed
(``seeded_application_weights``), loaded with ``weights=<path>``, and the predictions on the
recorded inputs compared with Keras's within 1e-5 relative (of the output's largest value).
The file is matched layer by layer in order, so a layer or weight out of Keras's order fails.
Each case predicts once with ``predict_on_batch`` (one compiled program: its first eager call,
compiling op by op, costs about three times as much).
"""
import gzip
import json
import os

import numpy as np
import pytest
from seeded_application_weights import case_inputs, seeded_arrays, write_published_layout

from minikeras import applications

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_applications")
with gzip.open(os.path.join(HERE, "structure.json.gz"), "rt") as _f:
    CASES = json.load(_f)
OUTPUTS = np.load(os.path.join(HERE, "outputs.npz"))


def assert_close_relative(actual, expected, rtol=1e-5):
    """Equal within ``rtol`` of each value, or of the largest value for values near zero."""
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


def seeded_model(case, tmp_path):
    """The case's application with the seeded weights, loaded from a published-layout file."""
    record = CASES[case]
    path = str(tmp_path / f"{case}.h5")
    write_published_layout(path, record["layers"], seeded_arrays(record["layers"], record["seed"]))
    kwargs = dict(record["kwargs"], input_shape=tuple(record["kwargs"]["input_shape"]))
    return getattr(applications, record["application"])(weights=path, **kwargs)


@pytest.mark.parametrize("case", sorted(CASES))
def test_predictions_equal_keras_for_the_same_weights_file(case, tmp_path):
    model = seeded_model(case, tmp_path)
    record = CASES[case]
    x = case_inputs(record["seed"], record["kwargs"]["input_shape"], batch=OUTPUTS[case].shape[0])
    assert_close_relative(np.asarray(model.predict_on_batch(x)), OUTPUTS[case])


def test_mobilenet_v3_saves_as_a_whole_model(tmp_path):
    """MobileNetV3's hard_sigmoid applies ``+`` and ``*`` to KerasTensors; the model's config
    describes them (as Keras 3's keras.ops nodes), so ``model.save`` writes it."""
    import warnings

    model = applications.MobileNetV3Small(weights=None, input_shape=(32, 32, 3), classes=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy format's warning
        model.save(str(tmp_path / "mobilenet_v3.h5"))


KERAS_LOADS_OURS = """
import json, sys, numpy as np, keras
cases = json.loads(sys.argv[1])
results = {}
for case, (application, kwargs, files) in cases.items():
    kwargs["input_shape"] = tuple(kwargs["input_shape"])
    model = getattr(keras.applications, application)(weights=None, **kwargs)
    x = np.load(files["x"])
    for kind in ("weights_h5", "legacy_h5"):
        for weight in model.weights:  # so that a load that changed nothing shows
            weight.assign(np.zeros(weight.shape, weight.dtype))
        model.load_weights(files[kind])
        results[f"{case}/{kind}"] = np.asarray(model.predict(x, verbose=0))
np.savez(sys.argv[2], **results)
"""


@pytest.mark.skipif(not os.environ.get("MINIKERAS_KERAS_PYTHON"), reason="MINIKERAS_KERAS_PYTHON is unset")
def test_keras_loads_our_weight_files_and_predicts_the_same(tmp_path):
    """minikeras saves each case's model as ``.weights.h5`` and as a legacy ``.h5``; Keras 3 builds
    the same application, loads each file and predicts what minikeras predicts."""
    import subprocess
    import warnings

    cases, ours = {}, {}
    for case in sorted(CASES):
        record = CASES[case]
        model = seeded_model(case, tmp_path)
        x = case_inputs(record["seed"], record["kwargs"]["input_shape"], batch=OUTPUTS[case].shape[0])
        ours[case] = np.asarray(model.predict_on_batch(x))
        files = {"x": str(tmp_path / f"{case}_x.npy"), "weights_h5": str(tmp_path / f"{case}_ours.weights.h5"),
                 "legacy_h5": str(tmp_path / f"{case}_ours.h5")}
        np.save(files["x"], x)
        model.save_weights(files["weights_h5"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the legacy format's warning
            model.save(files["legacy_h5"])
        cases[case] = (record["application"], record["kwargs"], files)
    out = str(tmp_path / "keras.npz")
    result = subprocess.run([os.environ["MINIKERAS_KERAS_PYTHON"], "-c", KERAS_LOADS_OURS, json.dumps(cases), out],
                            capture_output=True, text=True, timeout=1200,
                            env=dict(os.environ, KERAS_BACKEND="jax"))
    assert result.returncode == 0, result.stderr[-3000:]
    keras_outputs = np.load(out)
    for case in cases:
        for kind in ("weights_h5", "legacy_h5"):
            assert_close_relative(keras_outputs[f"{case}/{kind}"], ours[case])

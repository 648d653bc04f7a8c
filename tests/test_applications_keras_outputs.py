"""mk.applications predict what Keras 3 predicts for the same weights file.

For each case of tests/fixtures/keras_applications (made by make_fixtures.py there with Keras 3.15
on JAX), the weight file Keras publishes an application's ImageNet weights as (legacy HDF5,
``layer_names``/``weight_names``) is written again from the recorded structure and the seed
(``seeded_application_weights``), loaded with ``weights=<path>``, and the predictions on the
recorded inputs compared with Keras's within 1e-5 relative (of the output's largest value).
The file is matched layer by layer in order, so a layer or weight out of Keras's order fails.
"""
import json
import os

import numpy as np
import pytest
from seeded_application_weights import case_inputs, seeded_arrays, write_published_layout

from minikeras import applications

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_applications")
with open(os.path.join(HERE, "structure.json")) as _f:
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
    assert_close_relative(np.asarray(model(x, training=False)), OUTPUTS[case])

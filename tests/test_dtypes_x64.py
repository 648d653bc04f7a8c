"""TF's dtypes with 64-bit dtypes on (``MINIKERAS_ENABLE_X64=1`` / ``mk.config.enable_x64()``) and off,
on the values the tutorials make (TF 2.21's dtypes, checked by hand on the real thing): each mode
runs in a fresh process, since jax's x64 flag and the once-per-process warning are global."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent("""
    import json, sys, warnings
    warnings.simplefilter("always")
    import numpy as np
    import minikeras as tf
    if sys.argv[1] == "call":
        tf.config.enable_x64()
    out = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = lambda t: t.dtype.name
        out["numpy_float64"] = d(tf.constant(np.ones(2)))
        out["numpy_int64"] = d(tf.constant(np.array([1, 2])))
        out["numpy_int64_scalar"] = d(tf.constant(np.int64(3)))
        out["python_int"] = d(tf.constant(1))
        out["python_ints"] = d(tf.constant([1, 2]))
        out["python_floats"] = d(tf.constant([1.5, 2.0]))
        out["argmax"] = d(tf.argmax([[1.0, 3.0]], axis=1))
        out["argmin"] = d(tf.argmin([[1.0, 3.0]], axis=1))
        out["argsort"] = d(tf.argsort([3, 1, 2]))
        out["cast_float64"] = d(tf.cast([1, 2], tf.float64))  # the probe's line 21
        out["cast_int64"] = d(tf.cast([1.0], tf.int64))
        out["zeros_int64"] = d(tf.zeros([2], dtype=tf.int64))
        out["range_dataset"] = tf.data.Dataset.range(3).element_spec.dtype.name
        out["categorical"] = d(tf.random.categorical([[0.0, 0.0]], 2))
        out["floatx"] = np.dtype(tf.keras.backend.floatx()).name
        out["variable_float64"] = d(tf.Variable(np.zeros(2)))
        out["scaled_pixels_times_weight"] = d(tf.constant(np.ones(2) / 255.0) * 2.0)
        if sys.argv[1] != "call":  # (the model part once per mode: it is what costs time here)
            model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
            out["dense_on_float64"] = d(model(np.ones((1, 3))))
            model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            history = model.fit(np.ones((8, 3)) / 255.0, np.array([0, 1] * 4), epochs=1, verbose=0)
            out["fit_loss_finite"] = bool(np.isfinite(history.history["loss"][0]))
            out["weights"] = sorted({w.dtype.name for w in model.weights})
            out["predict"] = str(model.predict(np.ones((2, 3)), verbose=0).dtype)
    out["warnings"] = [str(w.message) for w in caught if "was requested at" in str(w.message)]
    out["x64"] = tf.config.x64_enabled()
    print("RESULT" + json.dumps(out))
""")

TF_X64 = {  # what TensorFlow 2.21 gives
    "numpy_float64": "float64", "numpy_int64": "int64", "numpy_int64_scalar": "int64", "python_int": "int32",
    "python_ints": "int32", "python_floats": "float32", "argmax": "int64", "argmin": "int64", "argsort": "int32",
    "cast_float64": "float64", "cast_int64": "int64", "zeros_int64": "int64", "range_dataset": "int64",
    "categorical": "int64", "floatx": "float32", "variable_float64": "float64",
    "scaled_pixels_times_weight": "float64", "dense_on_float64": "float32", "fit_loss_finite": True,
    "weights": ["float32"], "predict": "float32"}


def _probe(tmp_path, mode):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = dict(os.environ)
    env.pop("MINIKERAS_ENABLE_X64", None)
    if mode == "env":
        env["MINIKERAS_ENABLE_X64"] = "1"
    result = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    line = [x for x in result.stdout.splitlines() if x.startswith("RESULT")][-1]
    return json.loads(line[len("RESULT"):])


@pytest.mark.parametrize("mode", ["env", "call"])
def test_x64_mode_follows_tf(tmp_path, mode):
    out = _probe(tmp_path, mode)
    assert out.pop("x64") is True
    assert out.pop("warnings") == []
    assert out == {k: v for k, v in TF_X64.items() if k in out}
    assert len(out) == len(TF_X64) - (4 if mode == "call" else 0)


def test_default_mode_is_32_bit_with_one_warning(tmp_path):
    out = _probe(tmp_path, "off")
    assert out.pop("x64") is False
    warnings = out.pop("warnings")
    assert len(warnings) == 1, warnings
    assert "float64 was requested at" in warnings[0] and "probe.py:21" in warnings[0]
    assert "mk.config.enable_x64()" in warnings[0] and "MINIKERAS_ENABLE_X64=1" in warnings[0]
    expected = {k: ("int32" if v == "int64" else "float32" if v == "float64" else v) for k, v in TF_X64.items()}
    assert out == expected

"""keras.config and keras.backend against Keras 3.15: defaults, setters and their errors, the
debugging caps on epochs and steps, and unsafe deserialization."""
import os
import sys
import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras
from minikeras.saving import safe_mode

LAMBDA_KERAS = os.path.join(os.path.dirname(__file__), "fixtures", "keras_files", "lambda.keras")


def test_defaults_are_keras():
    config = keras.config
    assert (config.floatx(), config.epsilon(), config.image_data_format()) == ("float32", 1e-7, "channels_last")
    assert (config.max_epochs(), config.max_steps_per_epoch()) == (None, None)
    assert config.backend() == keras.backend.backend() == "tensorflow"
    assert not config.is_traceback_filtering_enabled() and not config.is_nnx_enabled()
    assert config.dtype_policy().name == "float32"


def test_image_data_format_is_settable_and_is_the_layers_default():
    try:
        keras.config.set_image_data_format("Channels_First")  # any capitalisation, as Keras
        assert keras.config.image_data_format() == keras.backend.image_data_format() == "channels_first"
        assert mk.backend.standardize_data_format(None) == "channels_first"
        assert mk.backend.standardize_data_format("CHANNELS_LAST") == "channels_last"
    finally:
        keras.config.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="The `data_format` argument must be one of {'channels_first', "
                                         "'channels_last'}. Received: data_format='NCHW'"):
        keras.config.set_image_data_format("NCHW")
    assert keras.config.image_data_format() == "channels_last"


def test_set_floatx_refuses_what_keras_refuses():
    for bad in ("int32", "bad"):
        with pytest.raises(ValueError, match=f"Unknown `floatx` value: {bad}. Expected one of"):
            keras.config.set_floatx(bad)
    try:
        keras.backend.set_floatx("float16")
        assert keras.config.floatx() == "float16"
    finally:
        keras.backend.set_floatx("float32")


def test_backend_helpers_as_keras():
    b = keras.backend
    assert b.standardize_dtype(None) == "float32" and b.standardize_dtype(np.float64) == "float64"
    assert b.standardize_dtype(mk.bfloat16) == "bfloat16" and b.standardize_dtype("bool") == "bool"
    with pytest.raises(ValueError, match="Invalid dtype: foo"):
        b.standardize_dtype("foo")
    assert b.is_float_dtype("bfloat16") and not b.is_float_dtype("int8")
    assert b.is_int_dtype("uint8") and not b.is_int_dtype("float32")
    assert b.is_keras_tensor(keras.Input((2,))) and not b.is_keras_tensor(np.ones(2))
    b.clear_session()
    assert [b.get_uid("a"), b.get_uid("a"), b.get_uid("b")] == [1, 2, 1]


@pytest.fixture
def small_model():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def test_max_epochs_and_max_steps_per_epoch_cap_fit_evaluate_and_predict(small_model):
    x, y = np.ones((40, 2), "float32"), np.ones((40, 1), "float32")
    try:
        keras.config.set_max_epochs(2)
        keras.config.set_max_steps_per_epoch(3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            history = small_model.fit(x, y, batch_size=4, epochs=5, verbose=0)
        messages = {str(w.message) for w in caught}
        assert {"Limiting epochs to 2", "Limiting steps_per_epoch to 3"} <= messages
        assert len(history.history["loss"]) == 2 and int(small_model.optimizer.iterations.numpy()) == 6
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert small_model.predict(x, batch_size=4, verbose=0).shape == (12, 1)
    finally:
        keras.config.set_max_epochs(None)
        keras.config.set_max_steps_per_epoch(None)
    assert small_model.predict(x, batch_size=4, verbose=0).shape == (40, 1)


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the fixture's bytecode is CPython 3.11's")
def test_enable_unsafe_deserialization_wins_over_safe_mode(monkeypatch):
    monkeypatch.setitem(safe_mode._state, "unsafe", False)
    with pytest.raises(ValueError, match="keras.config.enable_unsafe_deserialization"):
        mk.saving.load_model(LAMBDA_KERAS)
    keras.config.enable_unsafe_deserialization()
    model = mk.saving.load_model(LAMBDA_KERAS, safe_mode=True)  # as Keras 3: the global setting wins
    np.testing.assert_array_equal(model(np.ones((1, 3), "float32")).numpy(), [[2.0, 2.0, 2.0]])


def test_interactive_logging_off_sends_one_line_per_epoch_to_the_logger(small_model, capsys, caplog):
    x, y = np.ones((8, 2), "float32"), np.ones((8, 1), "float32")
    assert keras.config.is_interactive_logging_enabled()
    keras.config.disable_interactive_logging()
    try:
        with caplog.at_level("INFO", logger="minikeras"):
            small_model.fit(x, y, batch_size=4, epochs=2, verbose=1)
            progress = mk.utils.Progbar(3)
            for step in range(3):
                progress.update(step + 1, values=[("loss", 1.0)])
    finally:
        keras.utils.enable_interactive_logging()
    assert capsys.readouterr().out == ""  # no bar drawn, nothing on stdout
    lines = [r.getMessage() for r in caplog.records if r.name == "minikeras"]
    assert [line.split(" - ")[0] for line in lines] == ["Epoch 1/2", "Epoch 2/2", "3/3"]
    assert all("loss: " in line for line in lines)


# Keras 3.15's answers on JAX (x64 off), printed by keras.backend.result_type in the reference venv
RESULT_TYPES = {('bool', 'int64'): 'int32', ('uint32', 'int8'): 'int32', ('uint8', 'int8'): 'int16',
                ('int8', 'uint16'): 'int32', ('int64', 'float32'): 'float32', ('bfloat16', 'float16'): 'float32',
                ('float16', 'int32'): 'float16', ('uint32', 'float16'): 'float16', ('bool', 'bool'): 'bool',
                ('int16', 'uint32'): 'int32', ('float64', 'int8'): 'float32', (int, 'int8'): 'int8',
                (float, 'int32'): 'float32', (bool, 'uint8'): 'uint8', (float, 'bfloat16'): 'bfloat16',
                (int,): 'int32', (): 'float32'}


def test_result_type_promotes_as_keras():
    for dtypes, expected in RESULT_TYPES.items():
        assert keras.backend.result_type(*dtypes) == expected, dtypes
    with pytest.raises(ValueError, match="Invalid dtype"):
        keras.backend.result_type("int33")


def test_backend_traceback_and_flash_attention_switches():
    keras.config.set_backend("tensorflow")
    with pytest.raises(ValueError, match="minikeras has one backend, 'tensorflow'.*backend='jax'"):
        keras.config.set_backend("jax")
    with pytest.warns(UserWarning, match="does not filter tracebacks"):
        keras.config.enable_traceback_filtering()
    assert not keras.config.is_traceback_filtering_enabled()
    assert keras.config.is_flash_attention_enabled() is None
    keras.config.disable_flash_attention()
    assert keras.config.is_flash_attention_enabled() is False
    with pytest.raises(NotImplementedError, match="no flash attention kernel"):
        keras.config.enable_flash_attention()

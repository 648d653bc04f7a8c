"""The text and number preprocessing layers against Keras 3.15's outputs, vocabularies and
configs (tests/fixtures/preprocessing/make_preprocessing_fixture.py made the fixture)."""
import ast
import os

import numpy as np
import pytest

import minikeras as mk

_FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "preprocessing", "preprocessing_keras.txt")
with open(_FIXTURE) as _f:
    CASES = [ast.literal_eval(line) for line in _f if line.strip()]


def _decode(x):
    if isinstance(x, list):
        return [_decode(v) for v in x]
    return x.decode() if isinstance(x, bytes) else x


def _as_list(config_value):
    return list(config_value) if isinstance(config_value, tuple) else config_value


@pytest.mark.parametrize("name,cls,kwargs,adapt_data,adapt_kwargs,inputs,expected", CASES, ids=[c[0] for c in CASES])
def test_matches_keras(name, cls, kwargs, adapt_data, adapt_kwargs, inputs, expected):
    layer = getattr(mk.layers, cls)(**kwargs)
    if adapt_data is not None:
        data = np.array(adapt_data)
        if adapt_kwargs.get("batch_size"):
            data = mk.data.Dataset.from_tensor_slices(data).batch(adapt_kwargs["batch_size"])
        layer.adapt(data)
    out = np.asarray(layer(np.array(inputs)).numpy())
    want = expected["output"]
    if out.dtype == object:
        assert _decode(out.tolist()) == _decode(want)
    else:
        np.testing.assert_allclose(out, np.asarray(want, dtype=out.dtype), rtol=1e-5, atol=1e-5)
    if "vocabulary" in expected:
        assert layer.get_vocabulary() == expected["vocabulary"]
    config = layer.get_config()
    for key, value in expected["config"].items():
        got = _as_list(config[key])
        if isinstance(value, list) and value and isinstance(value[0], float):
            np.testing.assert_allclose(got, value, rtol=1e-5)
        else:
            assert got == value, key


def test_adapt_streams_batches_from_a_generator_and_steps():
    layer = mk.layers.TextVectorization()
    batches = (np.array(["a b", "b c"]) for _ in range(3))
    layer.adapt(batches, steps=2)
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "c", "a"]
    norm = mk.layers.Normalization()
    norm.adapt([np.array([[0.0], [2.0]]), np.array([[4.0], [6.0]])].__iter__())
    np.testing.assert_allclose(norm.weights[0].numpy(), [3.0])
    np.testing.assert_allclose(norm.weights[1].numpy(), [5.0])


def test_numeric_layers_run_inside_compiled_functions():
    norm = mk.layers.Normalization(mean=[1.0, 2.0], variance=[4.0, 9.0])
    disc = mk.layers.Discretization(bin_boundaries=[0.0, 1.0])
    enc = mk.layers.CategoryEncoding(num_tokens=3, output_mode="count")
    step = mk.function(lambda x: (norm(x), enc(disc(x))))
    a, b = step(mk.constant([[3.0, 0.5]]))
    np.testing.assert_allclose(a.numpy(), [[1.0, -0.5]])
    np.testing.assert_allclose(b.numpy(), [[0.0, 1.0, 1.0]])


def test_string_layers_refuse_compiled_functions():
    lookup = mk.layers.IntegerLookup(vocabulary=[1, 2])
    with pytest.raises(TypeError, match="runs on the host"):
        mk.function(lambda x: lookup(x))(mk.constant([1, 2]))


def test_bad_input_errors_name_the_layer():
    norm = mk.layers.Normalization(name="norm")
    with pytest.raises(ValueError, match="Normalization 'norm' has no mean and variance yet"):
        norm(np.zeros((2, 3), np.float32))
    norm.adapt(np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match=r"'norm' was built for inputs of shape \(2, 3\).*\(4, 2\)"):
        norm.adapt(np.ones((4, 2), np.float32))
    with pytest.raises(TypeError, match="Normalization 'norm'.adapt expects numbers, received data of dtype string"):
        mk.layers.Normalization(name="norm").adapt(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="Normalization 'norm' expects numbers, received strings"):
        norm(mk.constant(["a"]))
    with pytest.raises(ValueError, match="StringLookup 'sl'.adapt expects strings, received data of dtype int"):
        mk.layers.StringLookup(name="sl").adapt(np.array([1, 2]))
    with pytest.raises(ValueError, match="TextVectorization 'tv' expects string inputs"):
        mk.layers.TextVectorization(name="tv", vocabulary=["a"])(np.array([1.0]))
    with pytest.raises(TypeError, match="CategoryEncoding 'ce' expects integer ids, received strings"):
        mk.layers.CategoryEncoding(num_tokens=2, name="ce")(["a"])
    with pytest.raises(TypeError, match=r"Dense 'dense_s' expects numbers, received strings of shape \(1, 2\): .*"
                                        "preprocessing layers"):
        mk.layers.Dense(2, name="dense_s")(np.array([["a", "b"]]))
    assert mk.layers.Lambda(mk.strings.upper)(["ab"]).numpy().tolist() == [b"AB"]  # a Lambda may take strings
    with pytest.raises(ValueError, match="input rank must be 1 or the last shape dimension must be 1"):
        mk.layers.TextVectorization(vocabulary=["a"])(np.array([["a", "b"]]))


def test_text_vectorization_callable_standardize_and_config_round_trip():
    def standardize(text):
        return mk.strings.regex_replace(mk.strings.lower(text), "<br />", " ")
    layer = mk.layers.TextVectorization(standardize=standardize, output_sequence_length=3)
    layer.adapt(["A<br />b", "b c"])
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "c", "a"]
    np.testing.assert_array_equal(layer(["a<br />B z"]).numpy(), [[4, 2, 1]])
    config = dict(layer.get_config(), standardize="lower", vocabulary=layer.get_vocabulary())
    clone = mk.layers.TextVectorization.from_config(config)
    assert clone.get_vocabulary() == layer.get_vocabulary()

"""Bad input and silent-wrong cases found by probing the preprocessing, string, recurrent and
functional surface, each checked against what TF 2.21 / Keras 3.15 do: empty documents in
adapt, lookups used before they have a vocabulary, negative ids, unsorted boundaries, strings
compared with numbers, int64 values narrowed to int32, a stateful RNN without a batch size,
NumPy functions on a KerasTensor, and an adapted vocabulary saved to a legacy .h5 file."""
import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras import dtypes
from minikeras.symbolic import KerasTensor


@pytest.mark.parametrize("docs", [["", "   ", "!!!"], ["", "a b", "!!!", "b"]])
def test_text_vectorization_adapts_on_documents_without_tokens(docs):
    # TF 2.21: vocabularies ['', '[UNK]'] and ['', '[UNK]', 'b', 'a']
    layer = mk.layers.TextVectorization()
    layer.adapt(docs)
    assert layer.get_vocabulary() == (["", "[UNK]"] if len(docs) == 3 else ["", "[UNK]", "b", "a"])


def test_tf_idf_counts_documents_without_tokens():
    # TF 2.21 on ["", "a b", "!!!", "b"]: vocabulary ['[UNK]', 'b', 'a'], "a" -> [0, 0, log(1 + 4/2)]
    layer = mk.layers.TextVectorization(output_mode="tf_idf")
    layer.adapt(["", "a b", "!!!", "b"])
    assert layer.get_vocabulary() == ["[UNK]", "b", "a"]
    np.testing.assert_allclose(layer(["a", ""]).numpy(), [[0, 0, np.log(3.0)], [0, 0, 0]], rtol=1e-6)


def test_adapt_on_a_text_line_dataset_with_a_blank_line(tmp_path):
    # TF 2.21 on the lines "hello world", "", "foo bar": ['[UNK]', 'world', 'hello', 'foo', 'bar'];
    # "hello foo" -> 0.9163 (log(1 + 3/2)) at both: the blank line counts as a document
    path = tmp_path / "lines.txt"
    path.write_text("hello world\n\nfoo bar\n")
    layer = mk.layers.TextVectorization(output_mode="tf_idf")
    layer.adapt(mk.data.TextLineDataset([str(path)]))
    assert layer.get_vocabulary() == ["[UNK]", "world", "hello", "foo", "bar"]
    np.testing.assert_allclose(layer(["hello foo"]).numpy(), [[0, 0, np.log(2.5), np.log(2.5), 0]], rtol=1e-6)


def test_lookups_without_a_vocabulary_raise_table_not_initialized():
    # TF 2.21: FailedPreconditionError "Table not initialized." for each of these
    with pytest.raises(mk.errors.FailedPreconditionError, match="Table not initialized: StringLookup"):
        mk.layers.StringLookup()(np.array(["a"]))
    with pytest.raises(mk.errors.FailedPreconditionError, match="Table not initialized: IntegerLookup"):
        mk.layers.IntegerLookup()(np.array([1]))
    with pytest.raises(mk.errors.FailedPreconditionError, match="Table not initialized: StringLookup"):
        mk.layers.StringLookup(invert=True)(np.array([1]))
    with pytest.raises(mk.errors.FailedPreconditionError, match="Table not initialized: TextVectorization .*adapt"):
        mk.layers.TextVectorization()(np.array(["a b"]))
    empty = mk.layers.TextVectorization()
    empty.adapt(["", "!!!"])  # adapted on no tokens: TF's table is still uninitialized
    with pytest.raises(mk.errors.FailedPreconditionError, match="Table not initialized"):
        empty(["a"])
    lookup = mk.layers.StringLookup()
    lookup.adapt(np.array(["a"]))
    assert lookup(np.array(["a", "b"])).numpy().tolist() == [1, 0]


def test_category_encoding_refuses_negative_ids_as_tensorflow():
    # TF 2.21: multi_hot and count raise "Input 'in' must be non-negative!"; one_hot gives a zero row
    for mode in ("multi_hot", "count"):
        with pytest.raises(mk.errors.InvalidArgumentError, match="non-negative! Negative input value found: -1"):
            mk.layers.CategoryEncoding(num_tokens=3, output_mode=mode)(np.array([[-1, 1]]))
    one_hot = mk.layers.CategoryEncoding(num_tokens=3, output_mode="one_hot")(np.array([-1, 1]))
    np.testing.assert_array_equal(one_hot.numpy(), [[0, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(
        mk.layers.CategoryEncoding(num_tokens=3, output_mode="multi_hot")(np.array([[5, 1]])).numpy(), [[0, 1, 0]])


def test_discretization_refuses_unsorted_boundaries():
    with pytest.raises(ValueError, match="Expected sorted boundaries"):
        mk.layers.Discretization(bin_boundaries=[3.0, 1.0])
    assert mk.layers.Discretization(bin_boundaries=[1.0, 1.0, 3.0])(np.array([2.0])).numpy().tolist() == [2]


def test_strings_compared_with_numbers_raise():
    strings = mk.constant(["1", "2"])
    with pytest.raises(TypeError, match="Cannot convert 1 to a string mk.Tensor"):  # TF: TypeError
        strings == 1  # noqa: B015
    with pytest.raises(TypeError, match="Cannot convert 1"):
        strings != 1  # noqa: B015
    with pytest.raises(mk.errors.InvalidArgumentError, match="expected to be a string tensor but is a int32"):
        strings == mk.constant([1, 2])  # noqa: B015
    assert (strings == "1").numpy().tolist() == [True, False]
    assert not bool(strings == None) and bool(strings != None)  # noqa: E711 - TF: False and True


def test_int64_values_narrowed_to_int32_warn_once_naming_the_line(monkeypatch):
    if mk.config.x64_enabled():
        pytest.skip("64-bit dtypes are on: nothing is narrowed")
    monkeypatch.setattr(dtypes, "_warned_narrowing", [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mk.constant(np.array([5, 7]))  # fits: no warning
        mk.constant(np.array([2**40]))
        mk.layers.Embedding(10, 2)(np.array([[2**33]]))
    messages = [str(w.message) for w in caught if "outside the int32 range" in str(w.message)]
    assert len(messages) == 1
    assert "test_probe_errors.py" in messages[0] and "1099511627776 becomes 0" in messages[0]
    assert "enable_x64" in messages[0] and caught[0].filename == __file__


def test_stateful_rnn_without_a_batch_size_says_it_must_be_static():
    # Keras 3: "When using `stateful=True` in a RNN, the batch size must be static. Found dynamic batch size"
    with pytest.raises(ValueError, match="batch size must be static. Found dynamic batch size: "
                                         r"sequence.shape=\(None, 5, 2\).*batch_size="):
        mk.Sequential([mk.Input((5, 2)), mk.layers.SimpleRNN(3, stateful=True)])
    with pytest.raises(ValueError, match="batch size must be static"):
        model = mk.Sequential([mk.layers.LSTM(3, stateful=True, input_shape=(5, 2))])
        model.compile("adam", "mse")
        model.fit(np.ones((8, 5, 2)), np.ones((8, 3)), batch_size=4, verbose=0)
    model = mk.Sequential([mk.Input((5, 2), batch_size=4), mk.layers.SimpleRNN(3, stateful=True)])
    assert model(np.ones((4, 5, 2), "float32")).shape == (4, 3)


def test_numpy_functions_on_a_keras_tensor_say_it_is_symbolic():
    inputs = mk.Input((3,))
    with pytest.raises(TypeError, match=r"np.exp was called on .*A KerasTensor is symbolic.*mk.math.exp\(x\)"):
        np.exp(inputs)
    for out in (np.add(inputs, 1), np.ones(3) + inputs, np.float32(2) * inputs, np.ones(3) < inputs,
                np.negative(inputs)):  # NumPy's operators on it stay graph nodes
        assert isinstance(out, KerasTensor) and out.shape == (None, 3)
    model = mk.Model(inputs, np.ones(3, "float32") - inputs)
    np.testing.assert_allclose(model(np.full((1, 3), 0.5, "float32")).numpy(), [[0.5, 0.5, 0.5]])


def test_legacy_h5_refuses_an_adapted_vocabulary_naming_keras_files(tmp_path):
    vectorize = mk.layers.TextVectorization(output_sequence_length=3)
    vectorize.adapt(["a b c", "a b"])
    inputs = mk.Input((1,), dtype="string")
    model = mk.Model(inputs, vectorize(inputs))
    with pytest.raises(ValueError, match=r"'text_vectorization.*' .*keeps state .*vocabulary.*save\('.*m.keras'\)"):
        model.save(tmp_path / "m.h5")
    assert not (tmp_path / "m.h5").exists()
    model.save(tmp_path / "m.keras")
    loaded = mk.saving.load_model(tmp_path / "m.keras")
    assert loaded.predict(np.array([["a b c"]]), verbose=0).tolist() == model.predict(
        np.array([["a b c"]]), verbose=0).tolist() == [[3, 2, 4]]
    given = mk.layers.TextVectorization(vocabulary=["a", "b"])
    with_given = mk.Model(inputs, given(inputs))  # a vocabulary given to the constructor is in the config
    with pytest.warns(UserWarning, match="legacy"):
        with_given.save(tmp_path / "given.h5")
    assert mk.saving.load_model(tmp_path / "given.h5").predict(np.array([["a b"]]), verbose=0).tolist() == [[2, 3]]

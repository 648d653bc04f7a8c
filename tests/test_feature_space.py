"""keras.utils.FeatureSpace: Keras 3.15's feature_space_test.py cases (output sizes 152/195/148,
dict and int outputs, custom preprocessors, no adapt, errors, saving), and values, files and
outputs checked against Keras 3.15 on JAX (fixtures/keras_feature_space, with its script)."""
import os

import numpy as np
import pytest

import minikeras as mk

FS = mk.utils.FeatureSpace
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras_feature_space")
FLOATS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def table(strings=True):
    data = {f"float_{i}": list(FLOATS) for i in (1, 2, 3)}
    data.update({f"int_{i}": list(range(10)) for i in (1, 2, 3)})
    if strings:
        data.update({f"string_{i}": [str(j) for j in range(10)] for i in (1, 2)})
    return data


def queries():
    """The fixture script's query rows: every third row and one unseen value per column."""
    return {k: v[::3] + ["x" if k.startswith("string") else (99 if k.startswith("int") else 2.5)]
            for k, v in table().items()}


def first_row(data):
    return {key: value[0] for key, value in data.items()}


def as_tensors(data):
    return {key: mk.constant(value) for key, value in data.items()}  # string columns: string Tensors


def no_strings_space(crosses, output_mode="concat", **overrides):
    features = {"float_1": "float", "float_2": "float_normalized", "float_3": "float_discretized",
                "int_1": "integer_categorical", "int_2": "integer_hashed", "int_3": "integer_categorical"}
    features.update(overrides)
    return FS(features=features, crosses=crosses, output_mode=output_mode)


def full_space(output_mode="concat"):
    return FS(features={"float_1": "float", "float_2": "float_normalized", "float_3": "float_discretized",
                        "string_1": "string_categorical", "string_2": "string_hashed",
                        "int_1": "integer_categorical", "int_2": "integer_hashed", "int_3": "integer_categorical"},
              crosses=[("float_3", "string_1"), ("string_2", "int_2")], output_mode=output_mode)


def test_basic_usage_no_strings():
    fs = no_strings_space([("int_1", "int_2"), ("int_2", "int_3")])
    fs.adapt(mk.data.Dataset.from_tensor_slices(table(False)))  # unbatched
    fs.adapt(mk.data.Dataset.from_tensor_slices(table(False)).batch(4))  # batched
    assert tuple(fs(first_row(table(False))).shape) == (152,)
    assert tuple(fs(first_row(as_tensors(table(False)))).shape) == (152,)
    assert tuple(fs(table(False)).shape) == (10, 152)
    assert tuple(fs(as_tensors(table(False))).shape) == (10, 152)
    numpy_columns = {k: np.asarray(v)[:, None] for k, v in table(False).items()}  # (batch, 1) arrays
    np.testing.assert_allclose(fs(numpy_columns).numpy(), fs(table(False)).numpy())


def test_output_mode_dict_no_strings():
    fs = no_strings_space([("int_1", "int_2")], output_mode="dict")
    fs.adapt(mk.data.Dataset.from_tensor_slices(table(False)))
    out = fs(first_row(table(False)))
    assert isinstance(out, dict) and len(out) == 7
    assert tuple(out["int_2"].shape) == (32,) and tuple(out["int_1_X_int_2"].shape) == (32,)
    for data in (table(False), as_tensors(table(False))):
        out = fs(data)
        assert len(out) == 7 and tuple(out["int_2"].shape) == (10, 32)


def test_output_mode_dict_of_ints_no_strings():
    fs = no_strings_space([FS.cross(("int_1", "int_2"), output_mode="int", crossing_dim=32)], output_mode="dict",
                          int_1=FS.integer_categorical(output_mode="int"),
                          int_2=FS.integer_hashed(num_bins=32, output_mode="int"),
                          int_3=FS.integer_categorical(output_mode="int"))
    fs.adapt(mk.data.Dataset.from_tensor_slices(table(False)))
    out = fs(first_row(table(False)))
    assert len(out) == 7
    for name in ("int_2", "int_1_X_int_2"):
        assert tuple(out[name].shape) == (1,) and mk.utils.standardize_dtype(out[name].dtype).startswith("int")


def test_basic_usage_and_dict_mode_with_strings():
    fs = full_space()
    fs.adapt(mk.data.Dataset.from_tensor_slices(table()))
    fs.adapt(mk.data.Dataset.from_tensor_slices(table()).batch(4))
    assert tuple(fs(first_row(table())).shape) == (195,)
    assert tuple(fs(first_row(as_tensors(table()))).shape) == (195,)
    assert tuple(fs(table()).shape) == (10, 195)
    assert tuple(fs(as_tensors(table())).shape) == (10, 195)
    fs = full_space("dict")
    fs.adapt(table())  # a dict of columns
    out = fs(first_row(table()))
    assert len(out) == 10
    assert [tuple(out[n].shape) for n in ("string_1", "int_2", "string_2_X_int_2")] == [(11,), (32,), (32,)]
    out = fs(as_tensors(table()))
    assert [tuple(out[n].shape) for n in ("string_1", "int_2", "string_2_X_int_2")] == [(10, 11), (10, 32), (10, 32)]


def test_advanced_usage():
    fs = FS(features={"float_1": FS.float(), "float_2": FS.float_normalized(),
                      "float_3": FS.float_discretized(num_bins=3), "string_1": FS.string_categorical(max_tokens=5),
                      "string_2": FS.string_hashed(num_bins=32),
                      "int_1": FS.integer_categorical(max_tokens=5, num_oov_indices=2),
                      "int_2": FS.integer_hashed(num_bins=32), "int_3": FS.integer_categorical(max_tokens=5)},
            crosses=[FS.cross(("float_3", "string_1"), crossing_dim=32),
                     FS.cross(("string_2", "int_2"), crossing_dim=32)])
    fs.adapt(mk.data.Dataset.from_tensor_slices(table()))
    assert tuple(fs(first_row(table())).shape) == (148,)


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(FIXTURES, "expected.npz")) as f:
        return dict(f)


def test_values_equal_keras(expected):
    """The fixture script's FeatureSpaces, built here the same way, give Keras 3.15's outputs."""
    data, rows = table(), queries()
    fs = FS(features={"float_1": FS.float(), "float_2": FS.float_normalized(),
                      "float_3": FS.float_discretized(num_bins=3), "float_4": FS.float_rescaled(scale=2.0, offset=1.0),
                      "string_1": FS.string_categorical(max_tokens=5), "string_2": FS.string_hashed(num_bins=16),
                      "int_1": FS.integer_categorical(max_tokens=5, num_oov_indices=2),
                      "int_2": FS.integer_hashed(num_bins=16), "int_3": FS.integer_categorical(max_tokens=5)},
            crosses=[FS.cross(("float_3", "string_1"), crossing_dim=8),
                     FS.cross(("string_2", "int_2"), crossing_dim=8)])
    fs.adapt(mk.data.Dataset.from_tensor_slices(dict(data, float_4=data["float_1"])))
    np.testing.assert_allclose(fs(dict(rows, float_4=rows["float_1"])).numpy(), expected["advanced"], atol=1e-5)

    fs = full_space("dict")
    fs.adapt(mk.data.Dataset.from_tensor_slices(data).batch(4))
    out = fs(rows)
    assert sorted(out) == sorted(k[len("dict/"):] for k in expected if k.startswith("dict/"))
    for name, value in out.items():
        np.testing.assert_allclose(value.numpy(), expected[f"dict/{name}"], atol=1e-5, err_msg=name)

    fs = FS(features={"string_1": FS.string_categorical(output_mode="int"),
                      "int_1": FS.integer_categorical(output_mode="int"),
                      "int_2": FS.integer_hashed(num_bins=32, output_mode="int")},
            crosses=[FS.cross(("string_1", "int_2"), output_mode="int", crossing_dim=32)], output_mode="dict")
    fs.adapt({k: data[k] for k in fs.features})
    out = fs({k: rows[k] for k in fs.features})
    for name, value in out.items():
        np.testing.assert_array_equal(value.numpy(), expected[f"ints/{name}"], err_msg=name)


def test_manual_preprocessor_tf_idf():
    data = {"text": ["1st string", "2nd string", "3rd string"]}
    tv = mk.layers.TextVectorization(output_mode="tf_idf")
    fs = FS(features={"text": FS.feature(preprocessor=tv, dtype="string", output_mode="float")})
    fs.adapt(mk.data.Dataset.from_tensor_slices(data))
    assert list(fs(data).shape) == [3, 5]


def test_no_adapt():
    data = {"int_1": list(range(10)),
            "text_1": ["This is", "not just", "an example", "of random words.", "these are", "some words", "in",
                       "a random", "example.", "Bye!"],
            "float_1": [-1.2, 0.0, 2.4, 1.2, 15.0, -100.0, 23.1, 3.12, 0.1, -0.01]}
    vocabulary = ["this", "is", "just", "an", "example", "with", "some", "words"]
    text = mk.layers.TextVectorization(vocabulary=vocabulary, output_mode="int", output_sequence_length=3)
    mean, variance = 12.0, 5.0
    fs = FS({"int_1": "integer_hashed",
             "text_1": FS.feature(dtype="string", preprocessor=text, output_mode="int"),
             "float_1": FS.feature(dtype="float32", preprocessor=mk.layers.Normalization(mean=mean, variance=variance),
                                   output_mode="float")},
            output_mode="dict")
    out = fs(data)
    assert tuple(out["int_1"].shape) == (10, 32) and tuple(out["text_1"].shape) == (10, 3)
    want = (np.asarray(data["float_1"], np.float32) - mean) / np.sqrt(variance)
    np.testing.assert_allclose(out["float_1"].numpy(), want[:, None], atol=1e-3)


def test_errors():
    with pytest.raises(ValueError, match="cannot be None or empty"):
        FS(features={})
    two = {"f1": "integer_categorical", "f2": "integer_categorical"}
    with pytest.raises(ValueError, match="`crossing_dim`"):
        FS(features=two, crosses=[("f1", "f2")], crossing_dim=None)
    with pytest.raises(ValueError, match="should be present in "):
        FS(features=two, crosses=[("f1", "unknown")], crossing_dim=32)
    with pytest.raises(ValueError, match="for argument `output_mode`"):
        FS(features=two, output_mode="unknown")
    with pytest.raises(ValueError, match="Invalid feature type: 'floats' for feature 'f1'"):
        FS(features={"f1": "floats"})
    with pytest.raises(ValueError, match="You need to call `.adapt"):
        FS(features=two)({"f1": [0], "f2": [0]})
    with pytest.raises(ValueError, match="You need to call `.adapt"):
        FS(features=two).get_encoded_features()
    fs = FS(features={"f1": "integer_hashed"})
    with pytest.raises(ValueError, match="can only be called with a dict"):
        fs([1, 2])
    with pytest.raises(ValueError, match="lacks 'f1'"):
        fs({"f2": [1]})
    with pytest.raises(ValueError, match="has not been encoded"):
        FS(features={"f1": FS.integer_hashed(8, output_mode="int")}).get_encoded_features()
    with pytest.raises(ValueError, match="can only be called on a mk.data.Dataset"):
        FS(features=two).adapt([1, 2])
    labelled = mk.data.Dataset.from_tensor_slices(({"f1": [1, 2], "f2": [3, 4]}, [0, 1]))
    with pytest.raises(ValueError, match="without labels; received elements of type tuple"):
        FS(features=two).adapt(labelled)
    with pytest.raises(ValueError, match=r"lack the features \['f2'\]"):
        FS(features=two).adapt({"f1": [1, 2]})


SAVED_FEATURES = ("float_2", "float_3", "string_1", "int_1")


def test_keras_file_loads_and_saves_back(expected, tmp_path):
    """Keras 3.15's .keras file of an adapted FeatureSpace loads here (vocabularies, statistics,
    boundaries) and gives Keras's outputs; saved again and reloaded, it still does."""
    fs = mk.saving.load_model(os.path.join(FIXTURES, "feature_space.keras"))
    rows = {k: queries()[k] for k in SAVED_FEATURES}
    np.testing.assert_allclose(fs(rows).numpy(), expected["saved"], atol=1e-6)
    fs.save(str(tmp_path / "again.keras"))
    fs = mk.saving.load_model(str(tmp_path / "again.keras"))
    np.testing.assert_allclose(fs(rows).numpy(), expected["saved"], atol=1e-6)


KERAS_LOADS_OURS = """
import os, sys
os.environ.setdefault("KERAS_BACKEND", "jax")
import json, keras, numpy as np
fs = keras.saving.load_model(sys.argv[1])
rows = json.loads(sys.argv[2])
np.save(sys.argv[3], np.asarray(fs(rows)))
"""


@pytest.mark.skipif(not os.environ.get("MINIKERAS_KERAS_PYTHON"), reason="MINIKERAS_KERAS_PYTHON is unset")
def test_keras_loads_our_file(expected, tmp_path):
    import json
    import subprocess

    data, rows = table(), {k: queries()[k] for k in SAVED_FEATURES}
    fs = FS(features={"float_2": "float_normalized", "float_3": FS.float_discretized(num_bins=4),
                      "string_1": "string_categorical", "int_1": FS.integer_categorical(num_oov_indices=2)},
            crosses=[FS.cross(("string_1", "int_1"), crossing_dim=8)])
    fs.adapt({k: data[k] for k in SAVED_FEATURES})
    fs.save(str(tmp_path / "ours.keras"))
    out = str(tmp_path / "keras_out.npy")
    subprocess.run([os.environ["MINIKERAS_KERAS_PYTHON"], "-c", KERAS_LOADS_OURS, str(tmp_path / "ours.keras"),
                    json.dumps(rows), out], check=True, capture_output=True)
    np.testing.assert_allclose(np.load(out), expected["saved"], atol=1e-6)


def test_saving_round_trip_and_functional_model(tmp_path):
    """Keras's test_saving: outputs equal after save/load and save again; a functional model on
    get_inputs()/get_encoded_features() predicts the same vectors from a Dataset."""
    fs = FS(features={"float_1": FS.float(), "float_2": FS.float_normalized(),
                      "float_3": FS.float_discretized(num_bins=3),
                      "int_1": FS.integer_categorical(max_tokens=5, num_oov_indices=2),
                      "int_2": FS.integer_hashed(num_bins=32), "int_3": FS.integer_categorical(max_tokens=5)},
            crosses=[FS.cross(("float_3", "int_1"), crossing_dim=32), FS.cross(("int_1", "int_2"), crossing_dim=32)])
    fs.adapt(mk.data.Dataset.from_tensor_slices(table(False)))
    reference = fs(table(False)).numpy()
    fs.save(str(tmp_path / "fs.keras"))
    fs = mk.saving.load_model(str(tmp_path / "fs.keras"))
    fs.save(str(tmp_path / "fs2.keras"))
    np.testing.assert_allclose(fs(first_row(table(False))).numpy(), reference[0], atol=1e-6)
    model = mk.Model(inputs=fs.get_inputs(), outputs=fs.get_encoded_features())
    predicted = model.predict(mk.data.Dataset.from_tensor_slices(table(False)).batch(4), verbose=0)
    np.testing.assert_allclose(predicted, reference, atol=1e-6)
    fs = mk.saving.load_model(str(tmp_path / "fs2.keras"))
    np.testing.assert_allclose(fs(table(False)).numpy(), reference, atol=1e-6)


def test_functional_model_with_strings_fits():
    """Keras's test_functional_api_sync_processing: a model on the encoded features, strings and
    crosses of preprocessed features included, fits, evaluates and predicts from Datasets."""
    fs = full_space()
    fs.adapt(mk.data.Dataset.from_tensor_slices(table()))
    model = mk.Model(inputs=fs.get_inputs(), outputs=mk.layers.Dense(1)(fs.get_encoded_features()))
    model.compile("adam", "mse")
    labels = np.array([0, 1, 0, 1, 0, 0, 1, 0, 1, 1], np.float32)
    model.fit(mk.data.Dataset.from_tensor_slices((table(), labels)).batch(4), verbose=0)
    model.evaluate(mk.data.Dataset.from_tensor_slices((table(), labels)).batch(4), verbose=0)
    predicted = model.predict(mk.data.Dataset.from_tensor_slices(table()).batch(4), verbose=0)
    dense = model.layers[-1]
    kernel, bias = (w.numpy() for w in dense.weights)
    np.testing.assert_allclose(predicted, fs(table()).numpy() @ kernel + bias, atol=1e-5)


def test_dataset_map():
    """Keras's test_tf_data_async_processing: Dataset.map(fs) and a lambda over (features, label)
    calling it, before and after batch; a model fits on the encoded vectors."""
    fs = no_strings_space([("float_3", "int_1"), ("int_1", "int_2")])
    fs.adapt(mk.data.Dataset.from_tensor_slices(table(False)))
    want = fs(table(False)).numpy()
    model = mk.Model(inputs=fs.get_encoded_features(), outputs=mk.layers.Dense(1)(fs.get_encoded_features()))
    model.compile("adam", "mse")
    labels = np.array([0, 1, 0, 1, 0, 0, 1, 0, 1, 1], np.float32)
    rows = mk.data.Dataset.from_tensor_slices(table(False))
    np.testing.assert_allclose(np.concatenate([b.numpy() for b in rows.map(fs).batch(4)]), want, atol=1e-6)
    np.testing.assert_allclose(np.concatenate([b.numpy() for b in rows.batch(4).map(fs)]), want, atol=1e-6)
    labelled = mk.data.Dataset.from_tensor_slices((table(False), labels))
    before = labelled.map(lambda x, y: (fs(x), y)).batch(4)  # traced with vmap, then run row by row
    np.testing.assert_allclose(np.concatenate([x.numpy() for x, _ in before]), want, atol=1e-6)
    model.fit(before, verbose=0)
    model.evaluate(labelled.batch(4).map(lambda x, y: (fs(x), y)), verbose=0)
    assert model.predict(rows.map(fs).batch(4), verbose=0).shape == (10, 1)


def test_host_part_takes_weightless_steps_feeding_a_host_layer():
    """A functional model crossing a Discretization's output with a string: the Discretization
    runs on the host with the cross (model.host_split()), and predict takes raw columns."""
    ages, colours = mk.Input(shape=(1,), name="age"), mk.Input(shape=(1,), dtype="string", name="colour")
    bins = mk.layers.Discretization(bin_boundaries=[30.0, 50.0])
    cross = mk.layers.HashedCrossing(num_bins=8, output_mode="one_hot")
    model = mk.Model({"age": ages, "colour": colours}, mk.layers.Dense(1)(cross([bins(ages), colours])))
    host_fn, device_model = model.host_split()
    assert bins not in device_model.part_layers and cross not in device_model.part_layers
    raw = {"age": [25.0, 40.0, 70.0], "colour": ["red", "blue", "red"]}
    crossed = cross([bins(np.array(raw["age"])[:, None]), np.array(raw["colour"], object)[:, None]]).numpy()
    kernel, bias = (w.numpy() for w in model.layers[-1].weights)
    np.testing.assert_allclose(model.predict(raw, verbose=0), crossed @ kernel + bias, atol=1e-6)

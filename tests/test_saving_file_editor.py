"""KerasFileEditor on a Keras-made .keras file (tests/fixtures/keras_multi_optimizer/model.keras:
Input(3) -> Dense(2, name="enc") -> Dense(1, name="dec"), compiled and fitted), checked against
what Keras 3.15's editor lists and reports for the same file and edits."""
import pathlib

import h5py
import numpy as np
import pytest

import minikeras as mk

KERAS_FILE = pathlib.Path(__file__).parent / "fixtures" / "keras_multi_optimizer" / "model.keras"


def _flat(tree, prefix=""):
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}/{key}"))
        else:
            out[f"{prefix}/{key}"] = value.shape
    return out


def _model(enc_units):
    inputs = mk.keras.Input((3,))
    hidden = mk.layers.Dense(enc_units, name="enc")(inputs)
    return mk.keras.Model(inputs, mk.layers.Dense(1, name="dec")(hidden))


@pytest.fixture
def editor():
    return mk.saving.KerasFileEditor(KERAS_FILE)


def test_weights_listing_as_keras(editor, capsys):
    # Keras 3.15's editor lists exactly these arrays for this file
    assert _flat(editor.weights_dict) == {
        "/layers/dense/0": (3, 2), "/layers/dense/1": (2,), "/layers/dense_1/0": (2, 1), "/layers/dense_1/1": (1,),
        **{f"/optimizer/{i}": () for i in (0, 1, 2, 3, 8, 9)}, "/optimizer/4": (3, 2), "/optimizer/5": (3, 2),
        "/optimizer/6": (2,), "/optimizer/7": (2,), "/optimizer/10": (2, 1), "/optimizer/11": (1,)}
    assert editor.config["class_name"] == "Functional" and editor.metadata["keras_version"] == "3.15.1"
    editor.summary()
    printed = capsys.readouterr().out
    assert "...layers" in printed and "...dense_1" in printed and "0: shape=(2, 1), dtype=float32" in printed


def test_compare_lists_the_mismatches_keras_lists(editor, capsys):
    result = editor.compare(_model(3))
    printed = capsys.readouterr().out
    for line in ("...Weight shape mismatch for /layers/dense/0\n    In reference model: shape=(3, 3)\n"
                 "    In saved file: shape=(3, 2)",
                 "...Weight shape mismatch for /layers/dense/1", "...Weight shape mismatch for /layers/dense_1/0",
                 "...Object /optimizer present in saved file, missing from reference model"):
        assert line in printed
    # Keras reports the same mismatches and status; its counts add nested results twice (error_count 6 here,
    # and 6 matches for the 4 weights of a compatible model)
    assert result == {"status": "error", "error_count": 4, "match_count": 1}
    editor.delete_object("optimizer")
    assert editor.compare(_model(2)) == {"status": "success", "error_count": 0, "match_count": 4}


def test_edits_as_keras(editor, capsys):
    editor.delete_object("optimizer")
    editor.rename_object("dense_1", "renamed")
    editor.delete_weight("layers/dense", "1")
    editor.add_object("layers/extra", {"0": np.ones((2,))})
    editor.add_weights("extra", {"1": np.zeros((3,))})
    assert _flat(editor.weights_dict) == {"/layers/dense/0": (3, 2), "/layers/renamed/0": (2, 1),
                                          "/layers/renamed/1": (1,), "/layers/extra/0": (2,),
                                          "/layers/extra/1": (3,)}
    capsys.readouterr()
    assert editor.compare(_model(3)) == {"status": "error", "error_count": 5, "match_count": 0}  # as Keras
    printed = capsys.readouterr().out
    assert "...Weight /layers/dense/1 present in reference model, missing from saved file" in printed
    assert "...Object /layers/extra present in saved file, missing from reference model" in printed


def test_edit_errors_as_keras(editor):
    with pytest.raises(ValueError, match="Name '0' occurs more than once in the model; try passing a complete path"):
        editor.delete_object("0")
    with pytest.raises(ValueError, match="Source name 'nothing' does not appear in the model"):
        editor.rename_object("nothing", "x")
    with pytest.raises(ValueError, match="Path 'layers/nothing' not found in model"):
        editor.delete_object("layers/nothing")
    with pytest.raises(ValueError, match="should be a leaf name, not a full path name"):
        editor.rename_object("dense", "layers/x")
    with pytest.raises(ValueError, match="Weight 7 not found in object dense. Weights found: \\['0', '1'\\]"):
        editor.delete_weight("dense", "7")
    with pytest.raises(ValueError, match="Argument `weights` should be a dict"):
        editor.add_object("layers/x", [np.ones(2)])
    with pytest.raises(ValueError, match="Path 'nowhere' not found in model"):
        editor.add_object("nowhere/x", {"0": np.ones(2)})
    with pytest.raises(ValueError, match="expected a `.weights.h5` extension"):
        editor.save("edited.keras")
    with pytest.raises(ValueError, match="expected a `.keras` `.weights.h5` extension"):
        mk.saving.KerasFileEditor("model.h5")


def test_saved_edit_loads_into_a_changed_model(editor, tmp_path):
    editor.delete_object("optimizer")
    new_kernel = np.full((3, 2), 0.5, np.float32)
    editor.delete_object("layers/dense")
    editor.add_object("layers/dense", {"0": new_kernel, "1": np.zeros(2, np.float32)})
    path = tmp_path / "edited.weights.h5"
    editor.save(path)
    with h5py.File(path) as f:
        assert sorted(f["layers/dense/vars"]) == ["0", "1"] and "optimizer" not in f
    model = _model(2)
    model.load_weights(path)
    np.testing.assert_array_equal(model.get_layer("enc").kernel.numpy(), new_kernel)
    np.testing.assert_array_equal(model.get_layer("dec").kernel.numpy(), editor.weights_dict["layers"]["dense_1"]["0"])
    again = mk.saving.KerasFileEditor(path)
    assert _flat(again.weights_dict) == _flat(editor.weights_dict)

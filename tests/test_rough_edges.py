"""Bad input met early with a clear error (Keras's or TensorFlow's type and message where they
have one): a file given to BackupAndRestore as its folder, a negative clip bound, a ragged
list to mk.constant, merge layers on shapes that do not broadcast (named, with None batch)."""
import numpy as np
import pytest

import minikeras as mk


def test_backup_and_restore_refuses_a_regular_file(tmp_path):
    path = tmp_path / "backup"
    path.write_text("not a folder")
    with pytest.raises(ValueError, match=r"BackupAndRestore: backup_dir=.*backup' is a file; it must be a folder"):
        mk.callbacks.BackupAndRestore(path)
    mk.callbacks.BackupAndRestore(tmp_path / "new")  # a path that does not exist yet is fine


@pytest.mark.parametrize("key", ["clipnorm", "clipvalue", "global_clipnorm"])
def test_negative_clip_bounds_are_refused(key):
    with pytest.raises(ValueError, match=rf"SGD: `{key}` must be a positive number or None.*{key}=-1"):
        mk.optimizers.SGD(**{key: -1})
    assert getattr(mk.optimizers.SGD(**{key: np.float32(0.5)}), key) == 0.5


def test_ragged_list_to_constant_gives_tensorflows_message():
    with pytest.raises(ValueError, match=r"Can.t convert non-rectangular Python sequence to Tensor: \[\[1, 2\]"):
        mk.constant([[1, 2], [3]])


def test_merge_of_shapes_that_do_not_broadcast_names_the_layer():
    a, b = mk.Input((4,)), mk.Input((5,))
    with pytest.raises(ValueError, match=r"Add 'adder': inputs have incompatible shapes\. Received shapes "
                                         r"\(None, 4\), \(None, 5\)"):
        mk.layers.Add(name="adder")([a, b])
    assert mk.layers.Add()([a, mk.Input((1,))]).shape == (None, 4)  # broadcasting shapes are fine


def test_main_job_warns_and_goes_on_without_a_writable_cache_folder(tmp_path, monkeypatch):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "mnist_cnn_example", Path(__file__).resolve().parents[1] / "examples" / "mnist_cnn.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    blocker = tmp_path / "home"
    blocker.write_text("a file where the home folder should be")  # unwritable even for root
    monkeypatch.setenv("MINIKERAS_HOME", str(blocker))
    with pytest.warns(RuntimeWarning, match="training without the compilation cache"):
        assert example.enable_compilation_cache() is None
    assert mk.config.compilation_cache_directory() is None or not str(mk.config.compilation_cache_directory()
                                                                       ).startswith(str(blocker))


def test_functional_shape_errors_show_unknown_sizes_as_none():
    a, b = mk.Input((3,)), mk.Input((4,))
    with pytest.raises(TypeError, match=r"\(None, 3\), \(None, 4\)") as raised:
        a + b
    assert "83" not in str(raised.value)
    with pytest.raises(ValueError, match=r"Dot 'dot.*': the contracted dimensions differ: \(None, 3\)\[1\] vs "
                                         r"\(None, 4\)\[1\]"):
        mk.layers.Dot(axes=1)([a, b])
    with pytest.raises(TypeError, match=r"\(83, 83, 3\), \(83, 83, 4\)"):  # a known size of 83: left as is
        mk.Input((83, 3)) + mk.Input((83, 4))


def test_offline_download_error_lists_each_mirror_once(tmp_path, monkeypatch):
    import traceback

    monkeypatch.setenv("MINIKERAS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MINIKERAS_DATASETS", raising=False)
    mirror = (tmp_path / "no-such-mirror").as_uri()
    with pytest.raises(OSError) as raised:
        mk.datasets.mnist.load_data(mirrors=[mirror])
    printed = "".join(traceback.format_exception(raised.value))
    assert printed.count(mirror) == 1, printed
    assert "Offline?" in printed and raised.value.failures

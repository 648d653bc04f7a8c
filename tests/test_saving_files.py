"""Atomic writes (``minikeras/saving/_files.py``): errors that name the target, and temp files
that never outlive their writer."""
import errno
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import minikeras as mk
from minikeras.saving import _files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def model():
    return mk.Sequential([mk.layers.Dense(3, input_shape=(4,))])


def test_read_only_folder_names_the_target(tmp_path, model, monkeypatch):
    target = str(tmp_path / "m.weights.h5")

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / ".m.weights.h5.123.abc.x"))

    monkeypatch.setattr(_files.tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError) as info:
        model.save_weights(target)
    message = str(info.value)
    assert f"Cannot write '{target}': permission denied (no write permission in the folder '{tmp_path}')" in message
    assert ".m.weights.h5.123" not in message


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_for_real(tmp_path, model):
    os.chmod(tmp_path, 0o555)
    try:
        with pytest.raises(PermissionError, match=r"Cannot write '.*m.weights.h5': permission denied"):
            model.save_weights(str(tmp_path / "m.weights.h5"))
    finally:
        os.chmod(tmp_path, 0o755)


def test_disk_full_is_one_clear_error_and_leaves_nothing(tmp_path, model, monkeypatch, capfd):
    target = tmp_path / "m.weights.h5"
    model.save_weights(str(target))
    before = target.read_bytes()

    def full(temp_path, data, mode):
        with open(temp_path, "wb") as f:
            f.write(data[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_files, "_write_all", full)
    with pytest.raises(OSError, match=r"Cannot write '.*m.weights.h5': the disk is full; the previous file"):
        model.save_weights(str(target))
    assert sorted(os.listdir(tmp_path)) == ["m.weights.h5"] and target.read_bytes() == before
    assert "Exception ignored" not in capfd.readouterr().err


def test_parent_that_is_a_file(tmp_path, model):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotADirectoryError, match=r"'.*afile' is a file, not a folder"):
        model.save_weights(str(tmp_path / "afile" / "sub" / "m.weights.h5"))
    with pytest.raises(FileNotFoundError, match=r"the folder '.*nowhere' does not exist"):
        model.save_weights(str(tmp_path / "nowhere" / "m.weights.h5"))


def test_temp_file_of_a_killed_writer_is_removed_by_the_next_save(tmp_path, model):
    # A real writer killed with SIGKILL in the middle of its write.
    script = textwrap.dedent(f"""
        import sys, time
        from minikeras.saving import _files
        def slow(temp_path, data, mode):
            with open(temp_path, "wb") as f:
                f.write(data[:5]); f.flush()
                print("writing", flush=True)
                time.sleep(60)
        _files._write_all = slow
        _files.atomic_write({str(tmp_path / 'm.weights.h5')!r}, b"0123456789")
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.stdout.readline().strip() == "writing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    leftovers = [n for n in os.listdir(tmp_path) if n.endswith(_files.TEMP_MARK)]
    assert len(leftovers) == 1 and leftovers[0].startswith(f".m.weights.h5.{proc.pid}.")
    assert not (tmp_path / "m.weights.h5").exists()
    model.save_weights(str(tmp_path / "other.weights.h5"))  # any save in that folder cleans up
    assert sorted(os.listdir(tmp_path)) == ["other.weights.h5"]


def test_temp_file_of_a_live_writer_is_kept(tmp_path):
    live = tmp_path / f".x.weights.h5.{os.getppid()}.abc{_files.TEMP_MARK}"
    live.write_bytes(b"")
    assert _files.remove_stale_temp_files(str(tmp_path)) == []
    assert live.exists()

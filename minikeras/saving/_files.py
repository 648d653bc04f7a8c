"""Files: atomic writes, and opening weights files with errors that name the file."""
import contextlib
import io
import os
import tempfile
import zipfile

import h5py

KERAS_ARCHIVE_WEIGHTS = "model.weights.h5"


def _default_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(filepath, write, overwrite=True):
    """Calls ``write(temp_path)``, then renames the temp file over ``filepath``.

    The temp file lives in the target's directory (so the rename is atomic). On any error,
    KeyboardInterrupt included, the temp file is removed and an existing ``filepath`` is left
    untouched: readers see the old file or the complete new one, never a partial write.
    """
    path = os.fspath(filepath)
    if os.path.isdir(path):
        raise IsADirectoryError(f"Cannot write '{path}': it is a directory")
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"'{path}' already exists; pass overwrite=True to replace it")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"Cannot write '{path}': the directory '{directory}' does not exist")
    mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else _default_mode()
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        write(temp)
        with open(temp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable, where the OS allows it
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def open_h5_for_reading(filepath):
    """An open ``h5py.File`` for a weights file (``.weights.h5``, Keras 2 ``.h5``, or the
    weights inside a ``.keras`` archive), or an error that names the file and the problem."""
    path = os.fspath(filepath)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No weights file found at '{path}'")
    if os.path.isdir(path):
        raise ValueError(f"'{path}' is a directory, not a weights file (TensorFlow checkpoints and SavedModel "
                         "directories are not supported: save with model.save_weights('name.weights.h5'))")
    if not h5py.is_hdf5(path):
        if zipfile.is_zipfile(path):
            return _open_archive_weights(path)
        size = os.path.getsize(path)
        raise ValueError(f"'{path}' is not an HDF5 file ({size} bytes, no HDF5 signature): expected a weights file "
                         "written by save_weights ('.weights.h5'), a Keras 2 '.h5' file, or a '.keras' archive")
    try:
        return h5py.File(path, "r")
    except OSError as error:
        raise ValueError(f"Cannot read the weights file '{path}': it is truncated or corrupted ({error})") from error


def _open_archive_weights(path):
    try:
        with zipfile.ZipFile(path) as archive:
            if KERAS_ARCHIVE_WEIGHTS not in archive.namelist():
                raise ValueError(f"'{path}' is a zip archive without '{KERAS_ARCHIVE_WEIGHTS}': not a .keras model "
                                 f"file (it contains {archive.namelist()[:10]})")
            data = archive.read(KERAS_ARCHIVE_WEIGHTS)
    except zipfile.BadZipFile as error:
        raise ValueError(f"Cannot read '{path}': the .keras archive is truncated or corrupted ({error})") from error
    try:
        return h5py.File(io.BytesIO(data), "r")
    except OSError as error:
        raise ValueError(f"Cannot read the weights inside '{path}': truncated or corrupted ({error})") from error

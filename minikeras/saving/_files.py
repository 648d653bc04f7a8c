"""Files: atomic writes, and opening weights files with errors that name the file."""
import contextlib
import errno
import io
import os
import tempfile
import zipfile

import h5py

KERAS_ARCHIVE_WEIGHTS = "model.weights.h5"


# A temp file is named ".<target name>.<writer pid>.minikeras-partial": recognisable, and
# removable by the next save in its folder once its writer is gone (killed mid-write).
TEMP_MARK = ".minikeras-partial"


def _default_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _writer_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temp_files(directory):
    """Removes the temp files that writers no longer running left in ``directory`` (a writer
    killed mid-write); returns their paths."""
    removed = []
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            if not (name.startswith(".") and name.endswith(TEMP_MARK)):
                continue
            pid = name[:-len(TEMP_MARK)].rsplit(".", 2)[-2] if name.count(".") >= 3 else ""
            if pid.isdigit() and int(pid) != os.getpid() and not _writer_alive(int(pid)):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(directory, name))
                    removed.append(os.path.join(directory, name))
    return removed


def make_temp_file(target):
    """``(fd, path)`` of a new temp file for ``target``, in its folder, named
    ``.<name>.<pid>.<random>.minikeras-partial`` so that ``remove_stale_temp_files`` knows it."""
    target = os.fspath(target)
    return tempfile.mkstemp(prefix=f".{os.path.basename(target)}.{os.getpid()}.", suffix=TEMP_MARK,
                            dir=os.path.dirname(os.path.abspath(target)))


def _check_directory(path, directory):
    if os.path.isdir(directory):
        return
    ancestor = directory
    while ancestor and not os.path.exists(ancestor):
        parent = os.path.dirname(ancestor)
        if parent == ancestor:
            break
        ancestor = parent
    if os.path.exists(ancestor) and not os.path.isdir(ancestor):
        raise NotADirectoryError(f"Cannot write '{path}': '{ancestor}' is a file, not a folder")
    raise FileNotFoundError(f"Cannot write '{path}': the folder '{directory}' does not exist (create it first, "
                            "e.g. os.makedirs(folder, exist_ok=True))")


def _os_error(path, error):
    reason = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
              errno.EACCES: "permission denied", errno.EPERM: "permission denied",
              errno.EROFS: "the file system is read-only"}.get(error.errno, error.strerror or str(error))
    folder = os.path.dirname(os.path.abspath(path))
    where = f" (no write permission in the folder '{folder}')" if error.errno in (errno.EACCES, errno.EPERM) else ""
    return type(error)(error.errno, f"Cannot write '{path}': {reason}{where}; the previous file, if any, is "
                       "unchanged")


def _write_all(temp_path, data, mode):
    with open(temp_path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(temp_path, mode)


def atomic_write(filepath, data, overwrite=True):
    """Writes the bytes ``data`` to ``filepath`` through a temp file in the same folder and a rename.

    Readers see the old file or the complete new one, never a partial write. On any error,
    KeyboardInterrupt included, the temp file is removed and an existing ``filepath`` is left
    untouched; OS errors (disk full, read-only folder) name ``filepath``, not the temp file. A
    writer killed mid-write leaves ``.<name>.<pid>.<random>.minikeras-partial``, which the next
    write in that folder removes.
    """
    path = os.fspath(filepath)
    if os.path.isdir(path):
        raise IsADirectoryError(f"Cannot write '{path}': it is a directory")
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"'{path}' already exists; pass overwrite=True to replace it")
    directory = os.path.dirname(os.path.abspath(path))
    _check_directory(path, directory)
    remove_stale_temp_files(directory)
    mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else _default_mode()
    try:
        fd, temp = make_temp_file(path)
    except OSError as error:
        raise _os_error(path, error) from None
    os.close(fd)
    try:
        _write_all(temp, data, mode)
        os.replace(temp, path)
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        if isinstance(error, OSError):
            raise _os_error(path, error) from None
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

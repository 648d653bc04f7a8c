"""Weights files: ``save_weights`` / ``load_weights`` in Keras 3's ``.weights.h5`` layout.

    model.save_weights("mnist.weights.h5")     # atomic: a temp file, then a rename
    model.load_weights("mnist.weights.h5")     # also Keras 3 files, Keras 2 '.h5', '.keras'
    save_model(model, "mnist.keras"); load_model("mnist.keras")   # Sequential and registered models
    save_model(model, "mnist.h5"); load_model("mnist.h5")         # the legacy HDF5 model file, as Keras 3

See ``weights_h5`` for the exact layout, ``legacy_h5`` for Keras 2's, ``model_file`` for ``.keras``,
``legacy_model_h5`` for whole models in HDF5, ``file_editor`` to inspect and edit a file's weights,
and ``registry`` for how a ``.keras`` file's classes are found again.
"""
import io
import os

import h5py

from minikeras.saving import legacy_h5, weights_h5
from minikeras.saving._files import (  # noqa: F401
    TEMP_MARK, atomic_write, make_temp_file, open_h5_for_reading, remove_stale_temp_files)
from minikeras.saving import legacy_model_h5, model_file
from minikeras.saving.file_editor import KerasFileEditor  # noqa: F401
from minikeras.saving.registry import (  # noqa: F401
    CustomObjectScope, custom_object_scope, deserialize_keras_object, get_custom_objects, get_registered_name,
    get_registered_object, register_keras_serializable, serialize_keras_object)


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """Writes a whole model: a ``.keras`` file (see ``model_file``), or with a ``.h5``/``.hdf5``
    name the legacy HDF5 file Keras 3 still writes, with its deprecation warning (see
    ``legacy_model_h5``)."""
    if legacy_model_h5.is_h5_path(filepath):
        return legacy_model_h5.save(model, filepath, overwrite=overwrite, include_optimizer=include_optimizer)
    return model_file.save_model(model, filepath, overwrite=overwrite)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Rebuilds a model saved by ``save_model`` (``.keras``, or a legacy ``.h5``/``.hdf5`` file),
    by minikeras or by Keras 3."""
    if legacy_model_h5.is_h5_path(filepath):
        return legacy_model_h5.load(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)
    return model_file.load_model(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def _require_built(model, what):
    if not getattr(model, "built", True):
        raise ValueError(f"You are {what} a model that has not yet been built ('{model.name}'). Build it first by "
                         "calling it on data, by model.build(input_shape), or by giving the first layer input_shape=")


def save_weights(model, filepath, overwrite=True, attrs=None):
    """Writes the model's weights (and its optimizer's state, if built) to ``filepath``.

    The file follows Keras 3's ``.weights.h5`` layout, so Keras 3 reads it for the same
    architecture. It is written atomically: on any error the previous file stays intact.
    ``attrs`` (str -> int/float/str) are stored as attributes of the file's root, in the same
    atomic write (``BackupAndRestore`` keeps its training position there); ``file_attrs``
    reads them back.

    Raises:
      ValueError: if ``filepath`` does not end in ``.weights.h5`` or the model is not built.
      FileExistsError: if the file exists and ``overwrite=False``.
    """
    path = os.fspath(filepath)
    if not str(path).endswith(".weights.h5"):
        raise ValueError(f"The filename must end in `.weights.h5`. Received: filepath={path}")
    _require_built(model, "saving the weights of")

    buffer = io.BytesIO()  # built in memory: a disk error then comes from one plain write, not from h5py
    with h5py.File(buffer, "w") as h5file:
        weights_h5.write(h5file, model)
        for key, value in (attrs or {}).items():
            h5file.attrs[key] = value
    atomic_write(path, buffer.getvalue(), overwrite=overwrite)


def file_attrs(filepath):
    """The root attributes of a weights file (``save_weights(..., attrs=)``), as Python values."""
    h5file = open_h5_for_reading(os.fspath(filepath))
    try:
        return {key: value.item() if hasattr(value, "item") else value for key, value in h5file.attrs.items()}
    finally:
        h5file.close()


def load_weights(model, filepath, skip_mismatch=False):
    """Loads weights saved by ``save_weights``, by Keras 3, or by Keras 2 (HDF5) into ``model``.

    Every count and shape is checked before any variable changes; the first mismatch is
    an error naming the layer, the weight and both shapes. With ``skip_mismatch=True`` the
    mismatching layers are skipped with a warning instead. Optimizer state in the file is
    restored into ``model.optimizer`` (built first if needed), and the random state saved with
    it (``mk.random``'s generator, fit's shuffle seed: see ``random_state``) is restored too.
    """
    path = os.fspath(filepath)
    _require_built(model, "loading weights into")
    h5file = open_h5_for_reading(path)
    restore_random_state = None
    try:
        if weights_h5.is_keras3_layout(h5file):
            assignments, restore_random_state = weights_h5.read(h5file, model, path, skip_mismatch)
        elif legacy_h5.is_legacy_layout(h5file):
            assignments = legacy_h5.read(h5file, model, path, skip_mismatch)
        else:
            raise ValueError(f"'{path}' is an HDF5 file but not a Keras weights file: it has neither Keras 3 groups "
                             f"('layers', 'vars') nor Keras 2 'layer_names'; its top-level keys are "
                             f"{sorted(h5file.keys())[:10]}")
    except (OSError, KeyError, RuntimeError) as error:
        raise ValueError(f"Cannot read the weights file '{path}': it is truncated or corrupted ({error})") from error
    finally:
        h5file.close()
    for variable, value in assignments:
        variable.assign(value)
    if restore_random_state is not None:
        restore_random_state(model)

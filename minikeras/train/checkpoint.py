"""``mk.train.Checkpoint``: object-based checkpoints of Variables, Modules and optimizers.

    ckpt = mk.train.Checkpoint(step=mk.Variable(1), optimizer=opt, net=net)
    path = ckpt.save("./ckpts/ckpt")        # './ckpts/ckpt-1', written to ./ckpts/ckpt-1.h5
    ckpt.restore(path).assert_consumed()     # or .expect_partial()

Every Variable reachable from the checkpoint is stored under its object path (see
``_graph``), one HDF5 file per checkpoint (see ``_file``), written atomically. Restoring
assigns the saved values to the Variables that exist now, matched by path; all shapes are
checked before any Variable changes. Unlike TensorFlow 1-style graphs there is no deferred
restoration: Variables created after ``restore`` (an unbuilt layer, optimizer slots made at
the first step) keep their initial values, as with Keras 3 objects under TF 2.21; build the
model (call it once) and the optimizer (``optimizer.build(model.trainable_variables)``)
before restoring, and check with ``assert_consumed()``.
"""
import os

import numpy as np

from minikeras.dtypes import canonical_dtype, int64
from minikeras.tensor import Variable
from minikeras.train import _file, _graph, _state

_COUNTER_KEY = "save_counter" + _graph.VALUE_SUFFIX


class Checkpoint:
    """Groups objects to save and restore together (``tf.train.Checkpoint``).

    Args:
      root: an optional object whose own children become this checkpoint's top level.
      **kwargs: the objects to save, by name: Variables, Modules (layers, models),
        optimizers or other Checkpoints, or lists and dicts of them. Attributes set later
        are added the same way.

    Raises:
      ValueError: an object that cannot be checkpointed (a Python number, a dataset iterator...).
    """

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_save_counter", None)
        if root is not None:
            _check_child("root", root)
        object.__setattr__(self, "_root", root)
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name == "save_counter":
            raise AttributeError("Checkpoint.save_counter is managed by save() and cannot be set")
        _check_child(name, value)
        self._children[name] = value

    def __getattr__(self, name):
        children = self.__dict__.get("_children", {})
        if name in children:
            return children[name]
        raise AttributeError(f"Checkpoint has no attribute {name!r} (it holds {sorted(children)})")

    def checkpoint_children(self):
        """(name, object) pairs below this checkpoint: the root's children, the named objects,
        and ``save_counter`` once it exists."""
        if self._root is not None:
            yield from _graph.children_of(self._root)
        yield from self._children.items()
        if self._save_counter is not None:
            yield "save_counter", self._save_counter

    @property
    def save_counter(self):
        """The number of ``save`` calls (a Variable, created at the first save or restore)."""
        return self._counter()

    def _counter(self):
        if self._save_counter is None:
            object.__setattr__(self, "_save_counter",
                               Variable(0, trainable=False, name="save_counter", dtype=canonical_dtype(int64)))
        return self._save_counter

    # -- writing ---------------------------------------------------------------------------
    def write(self, file_prefix, options=None):
        """Writes a checkpoint at exactly ``file_prefix`` (file ``<file_prefix>.h5``);
        ``save_counter`` and the directory's ``checkpoint`` state file are left alone.
        Returns ``file_prefix``."""
        path = os.fspath(file_prefix)
        _file.write(path, {key: np.asarray(v.numpy()) for key, v in _graph.variables_by_key(self).items()})
        return path

    def save(self, file_prefix, options=None):
        """Counts the save, writes ``<file_prefix>-<save_counter>`` and records it as the
        latest checkpoint of its directory (for ``mk.train.latest_checkpoint``). Returns the path."""
        counter = self._counter()
        counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(counter.numpy())}")
        _state.record(os.path.dirname(path), path, [path])
        return path

    # -- reading ---------------------------------------------------------------------------
    def restore(self, save_path, options=None):
        """Assigns the values saved at ``save_path`` to this checkpoint's Variables, matched
        by object path. ``save_path`` None (no checkpoint yet, e.g. ``manager.latest_checkpoint``
        on a first run) restores nothing.

        Returns:
          a status with ``assert_consumed()``, ``assert_existing_objects_matched()``,
          ``expect_partial()`` (each returns the status).

        Raises:
          NotFoundError: nothing at ``save_path``.
          ValueError: a saved value whose shape or dtype differs from its Variable's.
        """
        if save_path is None:
            return InitializationOnlyStatus()
        return self.read(save_path)

    def read(self, save_path, options=None):
        """Restores from a checkpoint written by ``write`` or ``save`` (as ``restore``)."""
        if save_path is None:
            raise ValueError("Checkpoint.read expects a checkpoint path, received None")
        saved = _file.read(save_path)
        if _COUNTER_KEY in saved:
            self._counter()
        current = _graph.variables_by_key(self)
        matched = [key for key in current if key in saved]
        for key in matched:
            _check_compatible(key, current[key], saved[key], save_path)
        for key in matched:
            current[key].assign(saved[key])
        unused = [key for key in saved if key not in current]
        missing = [key for key in current if key not in saved]
        return CheckpointLoadStatus(os.fspath(save_path), matched, unused, missing)

    def __repr__(self):
        return f"<mk.train.Checkpoint of {sorted(self._children)}>"


def _check_child(name, value):
    if not _graph.is_checkpointable(value):
        raise ValueError(
            f"Checkpoint was expecting {name} to be a checkpointable object (an mk.Variable, a Module such as a "
            f"layer or model, an optimizer, a Checkpoint, or a list or dict of them), got {value!r} of type "
            f"{type(value).__name__}. Wrap numbers in mk.Variable; dataset iterators cannot be saved.")


def _check_compatible(key, variable, value, save_path):
    if tuple(value.shape) != tuple(variable.shape):
        raise ValueError(
            f"Received incompatible tensor with shape {tuple(value.shape)} when attempting to restore variable with "
            f"shape {tuple(variable.shape)} and name {variable.name} (checkpoint key '{key}' in {save_path})")
    if np.dtype(value.dtype) != np.dtype(variable.dtype):
        raise ValueError(
            f"Checkpoint key '{key}' in {save_path} holds dtype {np.dtype(value.dtype).name}, but variable "
            f"{variable.name} has dtype {np.dtype(variable.dtype).name}")


class CheckpointLoadStatus:
    """What a ``restore`` matched. Attributes: ``matched``, ``unused`` (saved values no
    object took) and ``missing`` (Variables the checkpoint has no value for), as key lists."""

    def __init__(self, save_path, matched, unused, missing):
        self.save_path, self.matched, self.unused, self.missing = save_path, matched, unused, missing

    def assert_consumed(self):
        """Raises AssertionError unless every saved value was restored and every Variable
        received one; returns the status."""
        if self.unused:
            raise AssertionError(
                f"Unresolved object in checkpoint {self.save_path}: {_listing(self.unused)} (no Variable of this "
                "program has that path: build the model and optimizer before restoring, or use expect_partial())")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        """Raises AssertionError if a Variable of this program got no value; returns the status."""
        if self.missing:
            raise AssertionError(
                f"Object not assigned a value from checkpoint {self.save_path}: {_listing(self.missing)}")
        return self

    def assert_nontrivial_match(self):
        """Raises AssertionError if nothing was restored; returns the status."""
        if not self.matched:
            raise AssertionError(f"Nothing was restored from checkpoint {self.save_path}: no saved key matches "
                                 f"this program's objects (saved: {_listing(self.unused)})")
        return self

    def expect_partial(self):
        """Declares that a partial restore is intended (nothing to silence here); returns the status."""
        return self

    def run_restore_ops(self, session=None):
        """Values are assigned eagerly by ``restore``: nothing left to run."""


class InitializationOnlyStatus:
    """The status of ``restore(None)``: nothing was restored."""

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_existing_objects_matched(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_nontrivial_match(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run."""


def _listing(keys, limit=8):
    shown = ", ".join(f"'{k}'" for k in keys[:limit])
    return shown + (f" and {len(keys) - limit} more" if len(keys) > limit else "")

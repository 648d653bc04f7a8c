"""``mk.train.CheckpointManager``, ``latest_checkpoint``, ``list_variables``, ``load_variable``.

    manager = mk.train.CheckpointManager(ckpt, "./tf_ckpts", max_to_keep=3)
    ckpt.restore(manager.latest_checkpoint)        # None on a first run: nothing restored
    ...
    manager.save()                                 # './tf_ckpts/ckpt-1', keeps the newest 3
"""
import contextlib
import os

from minikeras.train import _file, _state


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint recorded in ``checkpoint_dir``'s state file, or None (no state
    file, or its checkpoint file is gone), as ``tf.train.latest_checkpoint``."""
    latest, _ = _state.read(checkpoint_dir, latest_filename)
    return latest if latest is not None and _file.exists(latest) else None


def _resolve(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        return found
    return path


def list_variables(ckpt_dir_or_file):
    """``[(key, shape), ...]`` of a checkpoint (or of a directory's latest one), sorted by key."""
    saved = _file.read(_resolve(ckpt_dir_or_file))
    return [(key, list(saved[key].shape)) for key in sorted(saved)]


def load_variable(ckpt_dir_or_file, name):
    """The NumPy value saved under key ``name`` (``tf.train.load_variable``)."""
    path = _resolve(ckpt_dir_or_file)
    saved = _file.read(path)
    if name not in saved:
        raise ValueError(f"Key '{name}' not found in checkpoint {path}; it holds {sorted(saved)[:10]}")
    return saved[name]


class CheckpointManager:
    """Saves numbered checkpoints of ``checkpoint`` in ``directory`` and keeps the newest
    ``max_to_keep`` (None: all), as ``tf.train.CheckpointManager``. Checkpoints already
    recorded in the directory are picked up, so a restarted program continues the list.

    Args:
      checkpoint: the ``mk.train.Checkpoint`` to save.
      directory: where the checkpoints and the ``checkpoint`` state file go (created).
      max_to_keep: how many checkpoints to keep; older ones are deleted at each save.
      checkpoint_name: the file prefix ('ckpt').
      step_counter: an optional Variable whose value numbers the checkpoints.
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        if not hasattr(checkpoint, "write") or not hasattr(checkpoint, "save_counter"):
            raise TypeError(f"CheckpointManager expects an mk.train.Checkpoint, received {type(checkpoint).__name__}")
        if max_to_keep is not None and (isinstance(max_to_keep, bool) or int(max_to_keep) < 1):
            raise ValueError(f"CheckpointManager: max_to_keep must be None or a positive integer, received "
                             f"{max_to_keep!r}")
        if keep_checkpoint_every_n_hours is not None or checkpoint_interval is not None:
            raise NotImplementedError("CheckpointManager: keep_checkpoint_every_n_hours and checkpoint_interval are "
                                      "not supported")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = None if max_to_keep is None else int(max_to_keep)
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._init_fn = init_fn
        _, recorded = _state.read(self._directory)
        self._checkpoints = [p for p in recorded if _file.exists(p)]

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoints(self):
        """The kept checkpoint paths, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self):
        """The newest kept checkpoint path, or None."""
        return self._checkpoints[-1] if self._checkpoints else None

    @property
    def checkpoint(self):
        return self._checkpoint

    def restore_or_initialize(self):
        """Restores the latest checkpoint if there is one (returning its path), else calls
        ``init_fn`` (if given) and returns None."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes the next checkpoint, numbered ``checkpoint_number``, the step counter's
        value, or the checkpoint's ``save_counter`` (incremented here in every case); deletes
        the oldest beyond ``max_to_keep``; returns the new path."""
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        if checkpoint_number is None:
            step = self._step_counter if self._step_counter is not None else counter
            checkpoint_number = int(step.numpy())
        path = self._checkpoint.write(f"{self._prefix}-{int(checkpoint_number)}")
        if path in self._checkpoints:
            self._checkpoints.remove(path)
        self._checkpoints.append(path)
        while self._max_to_keep is not None and len(self._checkpoints) > self._max_to_keep:
            with contextlib.suppress(FileNotFoundError):
                os.remove(_file.file_of(self._checkpoints.pop(0)))
        _state.record(self._directory, path, self._checkpoints)
        return path

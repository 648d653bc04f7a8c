"""The ``checkpoint`` state file of a checkpoint directory, in TensorFlow's text format:

    model_checkpoint_path: "ckpt-3"
    all_model_checkpoint_paths: "ckpt-1"
    all_model_checkpoint_paths: "ckpt-2"
    all_model_checkpoint_paths: "ckpt-3"

Paths inside the directory are stored relative to it. ``latest_checkpoint`` reads it;
``Checkpoint.save`` and ``CheckpointManager`` write it (atomically).
"""
import os
import re

from minikeras.saving import atomic_write

FILENAME = "checkpoint"
_LINE = re.compile(r'^\s*(\w+)\s*:\s*"((?:[^"\\]|\\.)*)"\s*$')


def _quote(path):
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _unquote(text):
    return re.sub(r"\\(.)", r"\1", text)


def _relative(directory, path):
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory):
        return os.path.basename(path)
    return path


def record(directory, latest, all_paths, latest_filename=None):
    """Writes the state file of ``directory``: ``latest`` and ``all_paths`` (oldest first)."""
    directory = directory or "."
    lines = [f"model_checkpoint_path: {_quote(_relative(directory, latest))}"]
    lines += [f"all_model_checkpoint_paths: {_quote(_relative(directory, p))}" for p in all_paths]
    text = "\n".join(lines) + "\n"
    atomic_write(os.path.join(directory, latest_filename or FILENAME), text.encode("utf-8"))


def read(directory, latest_filename=None):
    """(latest path, all paths) recorded for ``directory`` (paths joined to it), or (None, [])."""
    path = os.path.join(os.fspath(directory), latest_filename or FILENAME)
    if not os.path.isfile(path):
        return None, []
    latest, all_paths = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            match = _LINE.match(line)
            if not match:
                continue
            key, value = match.group(1), os.path.join(os.fspath(directory), _unquote(match.group(2)))
            if key == "model_checkpoint_path":
                latest = value
            elif key == "all_model_checkpoint_paths":
                all_paths.append(value)
    return latest, all_paths

"""Compiled programs kept on disk between runs (jax's persistent compilation cache).

XLA compiles a training step once per process: for the Keras MNIST CNN on a 2-core CPU that is
~1.1 s of the first call's ~1.5 s, paid again by every run of the same script. With the cache
on, a later run with the same program (same model, shapes, jax version and machine) loads the
executable from disk instead, and the first call takes ~0.4 s.

    mk.config.enable_compilation_cache()            # $MINIKERAS_HOME/compiled (~/.minikeras/compiled)
    mk.config.enable_compilation_cache("/tmp/xla")  # or a directory of your choice
    mk.config.disable_compilation_cache()

The setting is jax's, so it is process-wide: it covers every program jax compiles from then on,
a user's own ``jax.jit`` functions included. Entries are keyed by the program, the compile
options, the jax version and the device, so a stale entry is never used; jax writes each entry
whole and drops the least recently used ones beyond ``max_bytes``. Loading an entry runs its
code, so keep the directory writable by you alone (the default is in your home directory).
"""
import os

import jax
from jax.experimental.compilation_cache import compilation_cache as _jax_cache

DEFAULT_MAX_BYTES = 1 << 30


def default_directory():
    """``$MINIKERAS_HOME/compiled``; ``MINIKERAS_HOME`` defaults to ``~/.minikeras``."""
    home = os.environ.get("MINIKERAS_HOME") or "~/.minikeras"
    return os.path.join(os.path.expanduser(home), "compiled")


def enable_compilation_cache(directory=None, max_bytes=DEFAULT_MAX_BYTES):
    """Keeps every program compiled from now on in ``directory`` and reuses it in later runs.

    Args:
      directory: where the compiled programs go (made if missing); default ``default_directory()``.
      max_bytes: the cache's size limit (least recently used entries go first), or -1 for none.

    Returns:
      The directory, as an absolute path.
    """
    if directory is None:
        directory = default_directory()
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"enable_compilation_cache: directory must be a path, received {directory!r}")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or not (max_bytes > 0 or max_bytes == -1):
        raise ValueError(f"enable_compilation_cache: max_bytes must be a positive int or -1 (no limit), received "
                         f"{max_bytes!r}")
    directory = os.path.abspath(os.fspath(directory))
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise NotADirectoryError(f"enable_compilation_cache: {directory} exists and is not a directory")
    os.makedirs(directory, exist_ok=True)
    if not os.access(directory, os.W_OK):
        raise PermissionError(f"enable_compilation_cache: cannot write to {directory}")
    # every program, however quickly it compiles: the first step's small ones add up too
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    jax.config.update("jax_compilation_cache_max_size", max_bytes)
    _jax_cache.set_cache_dir(directory)
    _jax_cache.reset_cache()  # so that a cache jax set up before (or found off) is opened anew
    return directory


def disable_compilation_cache():
    """Stops reading and writing compiled programs on disk (the files stay)."""
    jax.config.update("jax_compilation_cache_dir", None)
    _jax_cache.reset_cache()


def compilation_cache_directory():
    """The directory compiled programs are kept in, or None when the cache is off."""
    return jax.config.jax_compilation_cache_dir

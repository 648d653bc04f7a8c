"""Keeping freed host memory for reuse (glibc): ``mk.config.reuse_freed_host_memory()``.

XLA:CPU allocates each compiled program's temporaries as one block with ``malloc``. glibc
serves every block over 32 MiB with fresh ``mmap``'d pages and unmaps it again on ``free``, so
a training step with more temporaries than that (a CNN's step at batch 128) page-faults through
all of them on every call: the kernel zero-fills each 4 KiB page again. Serving large blocks
from the heap instead, and not trimming the heap right after each step, lets the next step
reuse the same pages (``benchmarks/train_step.py`` against ``train_step.py --default-malloc``,
which prints each contender's page faults per step).

That holds for the main heap only. glibc gives other threads arenas of their own, made of heaps
of at most 64 MiB, and XLA allocates a step's temporaries on one of its own threads: for the
MNIST CNN's block glibc mapped a fresh heap on every step and unmapped it after (seen with
``strace``, the trim threshold notwithstanding), so the step page-faulted through it anyway. So
the call also limits glibc to one arena: every thread allocates from the main heap, which is
kept. Threads that have allocated before the call keep their arenas, so it must come before the
first jax computation: ``import minikeras`` makes it.

The price is memory: the process keeps up to ``retain_bytes`` of freed heap (the default,
``tuning.HOST_MEMORY_RETAIN_BYTES``, is None: all of it, so the heap stays at its peak, as
TensorFlow's allocator keeps its pool), and large blocks can no longer be handed back
individually. A finite amount is not enough for a step whose temporaries come near it: glibc
trims the top of the heap whenever more than ``retain_bytes`` lies free there, and a step's
block of temporaries rarely fits again in the hole the last one left (small blocks allocated
meanwhile split it), so the heap grows at its top, is trimmed back, and the step page-faults
through its temporaries again (the tuning row's models). The setting is process-wide. ``import minikeras`` makes it
(``apply_at_import``), since a TensorFlow program ported by renaming would otherwise run CNN
steps well below TensorFlow's speed (TensorFlow's own allocator keeps its buffers, so it needs
no such setting); set the environment variable ``MINIKERAS_REUSE_HOST_MEMORY=0`` before the
import to leave glibc as it is. ``active()`` says whether the setting was made.
"""
import ctypes
import ctypes.util
import math
import os
import warnings

from minikeras.xla_cpu import tuning

_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8
_NEVER_TRIM = -1  # glibc's mallopt: M_TRIM_THRESHOLD -1 turns trimming off

ENVIRONMENT_VARIABLE = "MINIKERAS_REUSE_HOST_MEMORY"
_applied = []  # the retain_bytes of the last setting made in this process


def _glibc():
    """The C library if it is glibc, else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # only glibc has it
    except (OSError, AttributeError):
        return None
    return libc


def reuse_freed_host_memory(retain_bytes=tuning.HOST_MEMORY_RETAIN_BYTES):
    """Makes ``malloc`` serve large blocks from the main heap, for every thread, and keep up to
    ``retain_bytes`` of freed heap for reuse instead of returning it to the OS at once (see the
    module docstring). Call it before the first jax computation.

    Args:
      retain_bytes: free heap kept before glibc trims it back, or None (the default,
        ``tuning.HOST_MEMORY_RETAIN_BYTES``) for all of it: the heap is never trimmed.

    Returns:
      True when applied; False where the C library is not glibc (macOS, Windows, musl), where
      there is nothing to change.

    Raises:
      ValueError: if ``retain_bytes`` is neither None nor a positive int below 2**31.
    """
    if retain_bytes is not None and (not isinstance(retain_bytes, int) or isinstance(retain_bytes, bool)
                                     or not 0 < retain_bytes < 1 << 31):
        raise ValueError(f"reuse_freed_host_memory: retain_bytes must be None (keep all freed heap) or an int in "
                         f"[1, 2**31), received {retain_bytes!r}")
    libc = _glibc()
    if libc is None:
        return False
    threshold = _NEVER_TRIM if retain_bytes is None else retain_bytes
    applied = (bool(libc.mallopt(_M_MMAP_MAX, 0)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, threshold))
               and bool(libc.mallopt(_M_ARENA_MAX, 1)))
    if applied:
        _applied[:] = [math.inf if retain_bytes is None else retain_bytes]
    return applied


def active():
    """The ``retain_bytes`` of the setting made in this process (``math.inf`` for all freed heap),
    or None if none was made."""
    return _applied[-1] if _applied else None


def apply_at_import(environ=os.environ):
    """What ``import minikeras`` does: ``reuse_freed_host_memory()`` with its default, unless
    ``environ["MINIKERAS_REUSE_HOST_MEMORY"]`` is ``"0"``. Any value other than ``"0"``, ``"1"``
    or empty gets a warning naming it, and the default.

    Returns:
      True when the setting was applied, False when opted out or not glibc.
    """
    value = environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if value == "0":
        return False
    if value not in ("", "1"):
        warnings.warn(f"{ENVIRONMENT_VARIABLE} must be '0' (leave glibc's malloc as it is) or '1' (the "
                      f"default: keep freed host memory for reuse), received {value!r}; using '1'",
                      RuntimeWarning, stacklevel=2)
    return reuse_freed_host_memory()

"""minikeras.xla_cpu.host_memory (mk.config.reuse_freed_host_memory, made by ``import minikeras``
unless MINIKERAS_REUSE_HOST_MEMORY=0): large blocks come from the heap afterwards (glibc)."""
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

import minikeras as mk
from minikeras.xla_cpu import host_memory, tuning
from minikeras.xla_cpu.host_memory import _glibc

needs_glibc = pytest.mark.skipif(_glibc() is None, reason="glibc only")


def _has_mallinfo2():
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").mallinfo2
    except (AttributeError, OSError):
        return False
    return True


needs_mallinfo2 = pytest.mark.skipif(_glibc() is None or not _has_mallinfo2(), reason="glibc >= 2.33 (mallinfo2)")

# a child process's start: glibc's mallinfo2 as ``libc.mallinfo2()``
MALLINFO2_CHILD = textwrap.dedent("""
    import ctypes, sys
    import numpy as np
    import minikeras as mk

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
""")

# mallinfo2 (glibc >= 2.33) counts the blocks served by mmap in hblks; run in a child process
# because the setting is process-wide
CHILD = MALLINFO2_CHILD + textwrap.dedent("""
    if sys.argv[1] == "reuse":
        assert mk.config.reuse_freed_host_memory() is True
    before = libc.mallinfo2().hblks
    block = np.ones(64 << 20, np.uint8)  # 64 MiB, over glibc's largest mmap threshold
    print(libc.mallinfo2().hblks - before)
""")


def run_child(code, mode, import_setting):
    """The last number a child process printed; ``import_setting`` is its
    MINIKERAS_REUSE_HOST_MEMORY (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != host_memory.ENVIRONMENT_VARIABLE}
    if import_setting is not None:
        env[host_memory.ENVIRONMENT_VARIABLE] = import_setting
    out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, check=True, env=env)
    return int(out.stdout.split()[-1])


def new_mmapped_blocks(mode, import_setting="0"):
    """How many mmap'd blocks allocating 64 MiB added in a child process."""
    return run_child(CHILD, mode, import_setting)


@needs_mallinfo2
def test_large_blocks_come_from_the_heap_after_the_call():
    assert new_mmapped_blocks("default") == 1
    assert new_mmapped_blocks("reuse") == 0
    assert new_mmapped_blocks("default", import_setting=None) == 0  # import minikeras made it
    assert new_mmapped_blocks("default", import_setting="1") == 0


# mallinfo2().arena: the bytes of heap glibc holds from the system; a freed block at the top of
# the heap is given back once more than the retained amount lies free there
TRIM_CHILD = MALLINFO2_CHILD + textwrap.dedent("""
    assert mk.config.reuse_freed_host_memory(None if sys.argv[1] == "all" else 16 << 20) is True
    block = np.ones(64 << 20, np.uint8)
    held = libc.mallinfo2().arena
    del block
    print((held - libc.mallinfo2().arena) >> 20)
""")


@needs_mallinfo2
def test_the_default_keeps_all_freed_heap():
    assert run_child(TRIM_CHILD, "16MiB", "0") >= 48  # MiB given back to the system
    assert run_child(TRIM_CHILD, "all", "0") == 0

# malloc_info lists one <heap nr=...> per arena; a thread that allocates gets an arena of its own
# by default, and the main one after the call
ARENAS_CHILD = textwrap.dedent("""
    import ctypes, os, sys, tempfile, threading
    import numpy as np
    import minikeras as mk

    if sys.argv[1] == "reuse":
        assert mk.config.reuse_freed_host_memory() is True
    blocks = []
    worker = threading.Thread(target=lambda: blocks.append(np.ones(40 << 20, np.uint8)))
    worker.start()
    worker.join()
    libc = ctypes.CDLL("libc.so.6")
    libc.fopen.restype = ctypes.c_void_p
    path = os.path.join(tempfile.mkdtemp(), "malloc_info.xml")
    stream = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(stream))
    libc.fclose(ctypes.c_void_p(stream))
    print(open(path).read().count("<heap nr="))
""")


def arenas_after_a_thread_allocates(mode, import_setting="0"):
    return run_child(ARENAS_CHILD, mode, import_setting)


@needs_glibc
def test_threads_allocate_from_the_main_heap_after_the_call():
    # glibc deletes a thread arena's heap once it is empty, so a step's large temporaries allocated
    # on XLA's threads would be mapped and faulted in again on every step
    assert arenas_after_a_thread_allocates("default") >= 2
    assert arenas_after_a_thread_allocates("reuse") == 1


# jax's own threads (XLA's thread pool runs a computation's work) must find one arena too, which
# holds only if the import made the setting before jax first ran anything
JAX_ARENAS_CHILD = ARENAS_CHILD.replace(
    "worker = threading.Thread(target=lambda: blocks.append(np.ones(40 << 20, np.uint8)))",
    "import jax, jax.numpy as jnp\n"
    "worker = threading.Thread(target=lambda: blocks.append(np.asarray(jax.jit(lambda x: (x @ x).sum())"
    "(jnp.ones((512, 512))))))")


@needs_glibc
def test_import_minikeras_makes_the_setting_before_jax_runs():
    assert run_child(JAX_ARENAS_CHILD, "default", import_setting=None) == 1
    assert run_child(JAX_ARENAS_CHILD, "default", import_setting="0") >= 2


def test_import_setting_reads_the_environment(monkeypatch):
    calls = []
    monkeypatch.setattr(host_memory, "reuse_freed_host_memory", lambda: calls.append(1) or True)
    assert host_memory.apply_at_import({}) is True
    assert host_memory.apply_at_import({"MINIKERAS_REUSE_HOST_MEMORY": "1"}) is True
    assert host_memory.apply_at_import({"MINIKERAS_REUSE_HOST_MEMORY": "0"}) is False
    assert host_memory.apply_at_import({"MINIKERAS_REUSE_HOST_MEMORY": " 0 "}) is False
    assert len(calls) == 2
    with pytest.warns(RuntimeWarning, match=r"MINIKERAS_REUSE_HOST_MEMORY must be '0' .* received 'off'"):
        assert host_memory.apply_at_import({"MINIKERAS_REUSE_HOST_MEMORY": "off"}) is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        host_memory.apply_at_import({"MINIKERAS_REUSE_HOST_MEMORY": ""})


@pytest.mark.parametrize("bad", [0, -1, 1 << 31, 1.5, "1G", True])
def test_bad_retain_bytes_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="reuse_freed_host_memory: retain_bytes"):
        mk.config.reuse_freed_host_memory(bad)


def test_public_name_and_tuned_default():
    assert mk.config.reuse_freed_host_memory is host_memory.reuse_freed_host_memory
    default = host_memory.reuse_freed_host_memory.__defaults__[0]
    assert default is tuning.HOST_MEMORY_RETAIN_BYTES is None  # all freed heap kept

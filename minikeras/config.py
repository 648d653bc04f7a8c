"""Devices and execution settings (``tf.config``'s subset)."""
import collections

import jax

from minikeras import _context
from minikeras.backend import enable_x64, x64_enabled  # noqa: F401  (mk.config.enable_x64)
from minikeras.compilation_cache import compilation_cache_directory, disable_compilation_cache, enable_compilation_cache  # noqa: F401  (mk.config.*)
from minikeras.xla_cpu import host_memory, low_precision, native_build
from minikeras.xla_cpu.host_memory import reuse_freed_host_memory  # noqa: F401  (mk.config.reuse_freed_host_memory)

NativeKernels = collections.namedtuple("NativeKernels", ["on", "reason", "directory"])


def native_kernels():
    """Whether minikeras's own CPU kernels are on: ``NativeKernels(on, reason, directory)``.

    Builds them first if this machine has none yet (once; one line of progress per library). ``reason`` says why
    they are off ('' when on): ``MINIKERAS_NATIVE=0``, no C++ compiler, a failed build (with
    the compiler's message), a platform other than Linux or macOS. ``directory`` is where the
    built libraries are kept.
    """
    on, reason = native_build.status()
    return NativeKernels(on, reason, native_build.library_directory())


def bfloat16_products():
    """How bfloat16 matmuls and convolutions (a 'mixed_bfloat16' policy's) run on this machine,
    in one line: XLA's bfloat16 dot where the CPU has AVX512_BF16 or AMX, else float32; the CPU
    flags that decide it (see docs/mixed_precision.md)."""
    return low_precision.describe()


def reusing_freed_host_memory():
    """The free heap (bytes) glibc keeps for reuse in this process (``reuse_freed_host_memory``,
    made by ``import minikeras`` unless ``MINIKERAS_REUSE_HOST_MEMORY=0``; ``math.inf``: all of
    it, the default), or None if not set."""
    return host_memory.active()


def list_devices(device_type=None):
    """The devices JAX can run on, e.g. ``[CpuDevice(id=0)]``; ``device_type`` filters by
    platform ('cpu', 'gpu', 'tpu')."""
    if device_type is None:
        return list(jax.devices())
    platform = device_type.lower()
    try:
        return list(jax.devices(platform))
    except RuntimeError:
        return []


list_physical_devices = list_devices
list_logical_devices = list_devices


def run_functions_eagerly(run_eagerly):
    """Makes every ``mk.function`` run its Python function eagerly (for debugging) when True."""
    _context.execution.run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    """Whether ``run_functions_eagerly(True)`` is in effect."""
    return _context.execution.run_functions_eagerly

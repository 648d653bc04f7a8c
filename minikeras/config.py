"""Devices and execution settings (``tf.config``'s subset)."""
import jax


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
    from minikeras import function as function_module
    function_module.RUN_EAGERLY = bool(run_eagerly)

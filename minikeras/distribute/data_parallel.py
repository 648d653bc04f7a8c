"""DataParallel: batches split over the devices, every Variable replicated (Keras 3's
``keras.distribution.DataParallel``, also ``mk.distribute.DataParallel``).

The machinery - one ``jax.jit`` step over the mesh, placement, the batch-size check - is
``distribution.Distribution``'s; this file says what data parallelism is: a 1-D mesh (or the
first axis of a given one) that batches are split over, and replicated state.
"""
import warnings

import jax
import numpy as np

from minikeras import _context
from minikeras.distribute.distribution import Distribution
from minikeras.distribute.mesh import DeviceMesh, list_devices

DEFAULT_BATCH_DIM_NAME = "batch"


def set_distribution(distribution):
    """Makes ``distribution`` (a ``DataParallel`` or ``ModelParallel``, or None to turn it off)
    apply to every compiled step - ``fit``/``evaluate``/``predict`` and ``mk.function`` calls -
    outside ``with`` scopes. Returns nothing, like Keras 3's ``keras.distribution.set_distribution``."""
    if distribution is not None and not isinstance(distribution, Distribution):
        raise TypeError(f"set_distribution expects a keras.distribution.DataParallel or ModelParallel (or None), "
                        f"received {type(distribution).__name__}")
    _context.execution.distribution = distribution


def get_distribution():
    """The distribution compiled steps use now: the innermost ``with`` scope of this thread
    (scopes are per thread, as TensorFlow's strategy scopes), else the one set with
    ``set_distribution`` (process-wide), else None (one device). Keras 3's ``distribution()``."""
    return _context.distribution()


class DataParallel(Distribution):
    """Data-parallel training: each device gets a part of every batch, Variables replicated.

    Args (Keras 3's; give ``device_mesh`` or ``devices``, or neither):
      device_mesh: a ``DeviceMesh``; batches are split over its first axis (a mesh of more than
        one axis is warned about, as in Keras, and its other axes hold copies).
      devices: a list of devices (``"cpu:3"``, ``"gpu:0"`` or ``jax.Device``s) made into a 1-D
        mesh with axis ``"batch"``. Neither: every device of ``list_devices()``, which after
        ``keras.distribution.initialize`` spans every host.
      auto_shard_dataset: kept as Keras keeps it (see ``Distribution``).

    >>> dp = keras.distribution.DataParallel()        # every device
    >>> model.compile("adam", "mse", distribution=dp)  # or keras.distribution.set_distribution(dp)
    >>> model.fit(x, y, batch_size=64)                 # 64 / len(dp.devices) examples per device
    """

    def __init__(self, device_mesh=None, devices=None, auto_shard_dataset=True):
        if device_mesh is not None and not isinstance(device_mesh, DeviceMesh):
            hint = (" A list of devices goes in devices=[...] (the first argument is device_mesh, as in Keras 3)."
                    if isinstance(device_mesh, (list, tuple, str, np.ndarray)) else "")
            raise ValueError(f"Expect `mesh` to be an instance of `DeviceMesh`. Received: mesh={device_mesh!r} "
                             f"(of type {type(device_mesh).__name__}).{hint}")
        if device_mesh is not None:
            if len(device_mesh.shape) != 1:
                warnings.warn(f"Expect the input mesh to be 1D, but received mesh.devices.ndim={len(device_mesh.shape)}"
                              ". The first axis will be used for data-parallel sharding.", stacklevel=2)
            super().__init__(device_mesh, device_mesh.axis_names[0], auto_shard_dataset)
            return
        if isinstance(devices, (str, jax.Device)):
            devices = [devices]
        if devices is None or len(devices) == 0:  # as Keras: no devices given means all of them
            devices = list_devices()
        devices = np.array(devices, dtype=object).reshape(-1)
        platforms = {str(d).partition(":")[0].lower() if isinstance(d, str) else d.platform for d in devices}
        if len(platforms) > 1:
            raise ValueError(f"DataParallel: all devices must be of one kind, received {sorted(platforms)}")
        mesh = DeviceMesh(shape=devices.shape, axis_names=[DEFAULT_BATCH_DIM_NAME], devices=devices)
        super().__init__(mesh, DEFAULT_BATCH_DIM_NAME, auto_shard_dataset)

    @property
    def num_model_replicas(self):
        """Every device holds a copy of the model."""
        return len(self.devices)

    def variable_sharding(self, variable):
        """Every Variable is replicated."""
        return self.replicated_sharding

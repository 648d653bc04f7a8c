"""Keras 3's device mesh and tensor layouts (``keras.distribution.DeviceMesh``/``TensorLayout``)
and its device listing (``list_devices``, ``get_device_count``), on ``jax.sharding``.

A ``DeviceMesh`` names the axes of an array of devices (``(2, 4)`` with ``("data", "model")``);
a ``TensorLayout`` says which mesh axis splits each dimension of an array (None: not split).
Devices are named as Keras names them, ``"cpu:0"``, ``"gpu:3"`` (the platform and JAX's global
device id), and are looked up only when the mesh is first used (``backend_mesh``), as in Keras.
"""
import math

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def list_devices(device_type=None):
    """The devices of ``device_type`` (``"cpu"``, ``"gpu"`` or ``"tpu"``; by default the
    accelerators if there are any, else the CPUs) of every process, as ``"cpu:0"``-style names."""
    device_type = device_type.lower() if device_type else None
    return [f"{device.platform}:{device.id}" for device in jax.devices(device_type)]


def get_device_count(device_type=None):
    """How many devices of ``device_type`` there are (the default type as ``list_devices``)."""
    device_type = device_type.lower() if device_type else None
    return jax.device_count(device_type)


def to_jax_device(device):
    """The ``jax.Device`` named ``device`` (``"cpu:3"``: the cpu device whose id is 3; ``"gpu"``
    is ``"gpu:0"``), or the ``jax.Device`` itself. Raises ValueError for a device that is not here."""
    if isinstance(device, jax.Device):
        return device
    name = str(device)
    kind, _, index = name.partition(":")
    try:
        number = int(index) if index else 0
    except ValueError:
        raise ValueError(f"Device not found: {name!r} (expected a name such as 'cpu:0' or 'gpu:1')") from None
    try:
        candidates = jax.devices(kind.lower())
    except RuntimeError:
        candidates = []
    for candidate in candidates:
        if candidate.id == number:
            return candidate
    raise ValueError(f"Device not found: {name!r}; this machine has {list_devices()}")


class DeviceMesh:
    """Devices arranged in a named grid (as ``jax.sharding.Mesh``).

    Args:
      shape: the grid's shape, e.g. ``(8,)`` for data parallelism or ``(2, 4)``.
      axis_names: one name per axis of ``shape``, e.g. ``["data", "model"]``; layouts and
        ``batch_dim_name`` refer to them.
      devices: the devices (names such as ``"cpu:0"`` or ``jax.Device``s), as many as
        ``prod(shape)``; by default ``list_devices()``.

    >>> mesh = keras.distribution.DeviceMesh((2, 4), ["data", "model"])
    """

    def __init__(self, shape, axis_names, devices=None):
        if not shape or not axis_names:
            raise ValueError(f"Shape and axis_names cannot be empty. Received: shape={shape}, axis_names={axis_names}")
        if len(shape) != len(axis_names):
            raise ValueError(f"Shape and axis_names should have same size. Received: shape={shape}, "
                             f"axis_names={axis_names}")
        if devices is None:
            devices = list_devices()
        devices = np.array(devices, dtype=object) if not isinstance(devices, np.ndarray) else devices
        if math.prod(shape) != math.prod(devices.shape):
            raise ValueError(f"Shape does not match the number of devices. Received: shape={shape}; "
                             f"devices.shape={devices.shape}")
        self._shape = shape
        self._axis_names = axis_names
        self._devices = np.reshape(devices, shape)
        self._backend_mesh = None

    @property
    def shape(self):
        return self._shape

    @property
    def axis_names(self):
        return self._axis_names

    @property
    def devices(self):
        """The devices as given, in a NumPy array of ``shape``."""
        return self._devices

    @property
    def backend_mesh(self):
        """The ``jax.sharding.Mesh`` of these devices (looked up on first use)."""
        if self._backend_mesh is None:
            found = [to_jax_device(d) for d in self._devices.flat]
            if len(set(found)) != len(found):
                raise ValueError(f"DeviceMesh: a device is listed twice in {[str(d) for d in self._devices.flat]}")
            self._backend_mesh = Mesh(np.array(found, dtype=object).reshape(self._devices.shape),
                                      tuple(self._axis_names))
        return self._backend_mesh

    def __repr__(self):
        return f"<{type(self).__name__} shape={self.shape}, axis_names={self.axis_names}>"

    __str__ = __repr__


class TensorLayout:
    """Which mesh axis splits each dimension of a tensor (as ``jax.sharding.NamedSharding``).

    Args:
      axes: one entry per dimension: a mesh axis name, or None for a dimension kept whole.
      device_mesh: the ``DeviceMesh``; may be set later, once (a ``LayoutMap`` sets its own).

    >>> keras.distribution.TensorLayout((None, "model"), mesh)   # columns split over "model"
    """

    def __init__(self, axes, device_mesh=None):
        self._axes = tuple(axes)
        self._device_mesh = device_mesh
        self._validate_axes()

    @property
    def axes(self):
        return self._axes

    @property
    def device_mesh(self):
        return self._device_mesh

    @device_mesh.setter
    def device_mesh(self, device_mesh):
        if self._device_mesh is not None:
            raise ValueError(f"Cannot override device mesh value. Existing value is {self._device_mesh}")
        self._device_mesh = device_mesh
        self._validate_axes()

    @property
    def backend_layout(self):
        """The ``jax.sharding.NamedSharding`` of this layout."""
        if self._device_mesh is None:
            raise ValueError(f"Cannot create sharding when device mesh is not set for TensorLayout (axes={self.axes}).")
        return NamedSharding(self._device_mesh.backend_mesh, PartitionSpec(*self._axes))

    def _validate_axes(self):
        if self._device_mesh:
            valid = set(self._device_mesh.axis_names)
            named = set(self._axes) - {None}
            if named - valid:
                raise ValueError(f"Invalid axis names for Layout. Valid axis names: {valid}, Got {named}")

    def __repr__(self):
        return f"<{type(self).__name__} axes={self.axes}, device_mesh={self.device_mesh}>"

    __str__ = __repr__

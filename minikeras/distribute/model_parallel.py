"""ModelParallel: Variables split over a device mesh by a ``LayoutMap``, batches split over its
batch axis (Keras 3's ``keras.distribution.ModelParallel``).

Each Variable's path (``variable.path``, e.g. ``"d1/kernel"``) is looked up in the layout map
(Keras's rules: the exact key, else the one key whose regex matches the whole path); a match
splits the Variable as its ``TensorLayout`` says, no match keeps it whole on every device. An
optimizer slot (Adam's momentum of ``d1/kernel``...) takes the layout of the Variable it is
the slot of, as in Keras. A layer whose ``"<name>/output"`` the map names has its output
placed with that layout inside the compiled step (``relayout.distribute_tensor``).
"""
from minikeras.distribute.distribution import Distribution
from minikeras.distribute.layout_map import LayoutMap
from minikeras.optimizers.base import slot_reference


class ModelParallel(Distribution):
    """Model (and data) parallelism over ``layout_map.device_mesh``.

    Args:
      layout_map: a ``LayoutMap`` from variable paths to ``TensorLayout``s.
      batch_dim_name: the mesh axis batches are split over (the mesh's first axis by default).
      auto_shard_dataset: kept as Keras keeps it (see ``Distribution``).

    >>> mesh = keras.distribution.DeviceMesh((2, 4), ["data", "model"])
    >>> layout_map = keras.distribution.LayoutMap(mesh)
    >>> layout_map["d1/kernel"] = (None, "model")     # columns over the 4 devices of "model"
    >>> keras.distribution.set_distribution(
    ...     keras.distribution.ModelParallel(layout_map=layout_map, batch_dim_name="data"))
    """

    def __init__(self, *, layout_map=None, batch_dim_name=None, auto_shard_dataset=True, **kwargs):
        kwargs.pop("device_mesh", None)  # Keras accepts and ignores it: the layout map's mesh is used
        if kwargs:
            raise TypeError(f"ModelParallel got unexpected keyword arguments: {sorted(kwargs)}")
        if layout_map is None:
            raise ValueError("You must specify a layout_map argument.")
        if not isinstance(layout_map, LayoutMap):
            raise ValueError(f"Argument `layout_map` must be a `LayoutMap` instance. Received: layout_map={layout_map}")
        device_mesh = layout_map.device_mesh
        batch_dim_name = batch_dim_name or device_mesh.axis_names[0]
        if batch_dim_name not in device_mesh.axis_names:
            raise ValueError(f"ModelParallel: batch_dim_name {batch_dim_name!r} is not an axis of the mesh "
                             f"{device_mesh}; expected one of {list(device_mesh.axis_names)}")
        super().__init__(device_mesh, batch_dim_name, auto_shard_dataset)
        if self.multi_process:
            raise ValueError("ModelParallel over the devices of several processes is not supported by minikeras; use "
                             "a mesh of this process's devices, or DataParallel across processes")
        self._layout_map = layout_map

    def get_variable_layout(self, variable):
        """The layout map's ``TensorLayout`` for ``variable.path`` (for an optimizer slot, that of
        its variable), else replicated."""
        reference = slot_reference(variable)
        path = (reference if reference is not None else variable).path
        layout = self._layout_map[path]
        if layout is not None:
            if len(layout.axes) != len(variable.shape):
                raise ValueError(f"ModelParallel: the layout {layout.axes} for '{path}' has {len(layout.axes)} axes, "
                                 f"but the variable has shape {tuple(variable.shape)}")
            sizes = dict(zip(self.device_mesh.axis_names, self.device_mesh.shape))
            for dim, (axis, size) in enumerate(zip(layout.axes, variable.shape)):
                if axis is not None and size % sizes[axis]:
                    raise ValueError(
                        f"ModelParallel: the layout {layout.axes} for '{path}' splits dimension {dim} of its shape "
                        f"{tuple(variable.shape)} over the {sizes[axis]} devices of mesh axis {axis!r}, but {size} is "
                        f"not a multiple of {sizes[axis]}; change the layer's size or the layout map's key")
            return layout
        return super().get_variable_layout(variable)

    def get_tensor_layout(self, path):
        """The layout map's ``TensorLayout`` for ``path`` (a layer's ``"<name>/output"``), or None."""
        return self._layout_map[path]

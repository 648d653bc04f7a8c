"""Keras 3's ``LayoutMap``: variable (and layer output) paths to ``TensorLayout``s, by regex."""
import collections.abc

from minikeras import path_patterns
from minikeras.distribute.mesh import TensorLayout


class LayoutMap(collections.abc.MutableMapping):
    """A dict from path patterns to ``TensorLayout``s, read with Keras 3's rules.

    ``layout_map[path]`` is the layout stored under ``path`` itself, else the one of the only key
    that matches the whole path as a regular expression (``re.fullmatch``), else None. A path
    that two or more keys match is a ValueError (Keras's rule: no "first match wins"). Values
    may be given as tuples of axis names, made into ``TensorLayout``s on this map's mesh.

    Keys are matched against ``variable.path`` (``"d1/kernel"``; list them with
    ``[v.path for v in model.variables]``) and, for layer outputs, ``"<layer name>/output"``.

    >>> layout_map = keras.distribution.LayoutMap(mesh)
    >>> layout_map[".*dense.*kernel"] = (None, "model")
    >>> layout_map["dense_1/kernel"].axes
    (None, 'model')
    """

    def __init__(self, device_mesh):
        self._layout_map = collections.OrderedDict()
        self._device_mesh = device_mesh

    def __getitem__(self, key):
        return path_patterns.lookup(self._layout_map, key, "layout", "tensor/variable path", "LayoutMap")[1]

    def __setitem__(self, key, layout):
        path_patterns.check_new_key(self._layout_map, key, "LayoutMap")
        if isinstance(layout, tuple):
            layout = TensorLayout(axes=layout, device_mesh=None)
        if not isinstance(layout, TensorLayout):
            raise ValueError(f"{layout} should be a TensorLayout type, got {type(layout)}")
        if layout.device_mesh is None and self._device_mesh is not None:
            layout.device_mesh = self._device_mesh
        self._layout_map[key] = layout

    def __delitem__(self, key):
        return self._layout_map.pop(key)

    def __len__(self):
        return len(self._layout_map)

    def __iter__(self):
        return iter(self._layout_map)

    @property
    def device_mesh(self):
        return self._device_mesh

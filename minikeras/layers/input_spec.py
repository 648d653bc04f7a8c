"""InputSpec: what a layer accepts as its first argument (rank, dtype, shape), checked by ``Layer.__call__``."""
import jax

from minikeras.dtypes import as_dtype


def _standard_shape(shape, what):
    try:
        return tuple(None if n is None else int(n) for n in shape)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a tuple of integers or None. Received: {shape!r}") from None


def _dtype_name(dtype):
    return as_dtype(dtype).name


class InputSpec:
    """The rank, dtype and shape a layer expects of each input, as Keras 3's ``InputSpec``.

    A layer that sets ``self.input_spec`` (an ``InputSpec``, or a list of them, one per input
    tensor of its first argument; None entries accept anything) refuses a mismatched input
    before it builds and after, with Keras's message: ``Input 0 with name 'None' of layer
    'dense' is incompatible with the layer: expected axis -1 of input shape to have value 4,
    but received input with shape (2, 3)``.

    Args:
      dtype: the input's dtype.
      shape: the whole shape, batch axis included (None: any size); sets ``ndim``.
      ndim, max_ndim, min_ndim: the rank, exactly or at most or at least.
      axes: ``{axis: size}`` for the sizes of some axes (negative axes count from the end).
      allow_last_axis_squeeze: accept a last axis of size 1 more or fewer than ``shape``.
      name: the key of this input when the layer is called with a dict.
      optional: the input may be None.

    >>> spec = mk.layers.InputSpec(min_ndim=2, axes={-1: 4})
    >>> spec
    InputSpec(min_ndim=2, axes={-1: 4})
    """

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
                 allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = _dtype_name(dtype) if dtype is not None else None
        if shape is not None:
            self.shape = _standard_shape(shape, "InputSpec `shape`")
            self.ndim = len(self.shape)
        else:
            self.ndim = ndim
            self.shape = None
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError):
            raise TypeError(f"Argument `axes` must be a dict with integer keys. Received: axes={axes}") from None
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim else self.max_ndim) - 1
            max_axis = max(self.axes)
            if max_axis > max_dim:
                raise ValueError(f"Axis {max_axis} is greater than the maximum allowed value: {max_dim}")

    def __repr__(self):
        parts = [f"dtype={self.dtype}" if self.dtype else "", f"shape={self.shape}" if self.shape else "",
                 f"ndim={self.ndim}" if self.ndim else "", f"max_ndim={self.max_ndim}" if self.max_ndim else "",
                 f"min_ndim={self.min_ndim}" if self.min_ndim else "", f"axes={self.axes}" if self.axes else ""]
        return f"InputSpec({', '.join(p for p in parts if p)})"

    def get_config(self):
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim, "max_ndim": self.max_ndim,
                "min_ndim": self.min_ndim, "axes": self.axes, "optional": self.optional}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _flatten(structure):
    return jax.tree_util.tree_leaves(structure, is_leaf=lambda x: x is None or not isinstance(x, (list, tuple, dict)))


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Raises Keras 3's ValueError where ``inputs`` (a tensor or a structure of them) does not
    satisfy ``input_spec`` (an ``InputSpec``, a structure of them, or None) of layer ``layer_name``."""
    if not input_spec:
        return
    specs = _flatten(input_spec)
    for spec in specs:
        if spec is not None and not isinstance(spec, InputSpec):
            raise TypeError(f"Layer '{layer_name}' has an invalid input_spec: expected InputSpec objects (or None), "
                            f"received {spec!r} of type {type(spec).__name__}")
    if isinstance(inputs, dict):
        names = [spec.name for spec in specs]
        if all(names):
            missing = [name for name in names if name not in inputs]
            if missing:
                raise ValueError(f'Missing data for input "{missing[0]}". You passed a data dictionary with keys '
                                 f"{list(inputs.keys())}. Expected the following keys: {names}")
            inputs = [inputs[name] for name in names]
    inputs = _flatten(inputs)
    if len(inputs) != len(specs):
        names = [spec.name for spec in specs if spec is not None]
        if len(names) == len(specs) and all(names):
            keys = ", ".join(f"'{n}': ..." for n in names)
            raise ValueError(f'Layer "{layer_name}" expects {len(specs)} named input(s) with keys {names}, but it '
                             f"received {len(inputs)} input tensors. Pass inputs as a dict, e.g. `layer({{{keys}}})`.")
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received {len(inputs)} input '
                         f"tensors. Inputs received: {inputs}")
    for index, (x, spec) in enumerate(zip(inputs, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        _check_one(index, x, spec, layer_name)


def _check_one(index, x, spec, layer_name):
    if not hasattr(x, "shape"):
        raise ValueError(f"Inputs to a layer should be tensors. Got '{x}' (of type {type(x)}) as input for layer "
                         f"'{layer_name}'.")
    shape = tuple(x.shape)
    ndim = len(shape)
    where = f"Input {index} with name '{spec.name}' of layer '{layer_name}' is incompatible with the layer"
    if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
        raise ValueError(f"{where}: expected ndim={spec.ndim}, found ndim={ndim}. Full shape received: {shape}")
    if spec.max_ndim is not None and ndim > spec.max_ndim:
        raise ValueError(f"{where}: expected max_ndim={spec.max_ndim}, found ndim={ndim}")
    if spec.min_ndim is not None and ndim < spec.min_ndim:
        raise ValueError(f"{where}: expected min_ndim={spec.min_ndim}, found ndim={ndim}. Full shape received: "
                         f"{shape}")
    if spec.dtype is not None:
        dtype = _dtype_name(x.dtype)
        if dtype != spec.dtype:
            raise ValueError(f"{where}: expected dtype={spec.dtype}, found dtype={dtype}")
    for axis, value in spec.axes.items():
        if value is not None and shape[axis] not in (value, None):
            raise ValueError(f"{where}: expected axis {axis} of input shape to have value {value}, but received "
                             f"input with shape {shape}")
    if spec.shape is not None:
        spec_shape = spec.shape
        if spec.allow_last_axis_squeeze:
            if shape and shape[-1] == 1:
                shape = shape[:-1]
            if spec_shape and spec_shape[-1] == 1:
                spec_shape = spec_shape[:-1]
        for spec_dim, dim in zip(spec_shape, shape):
            if spec_dim is not None and dim is not None and spec_dim != dim:
                raise ValueError(f"{where}: expected shape={spec.shape}, found shape={shape}")

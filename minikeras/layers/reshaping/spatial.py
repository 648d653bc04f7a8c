"""What the padding, cropping and upsampling layers share: per-axis arguments and their axes."""
import numpy as np

from minikeras.ops.array import broadcast_to, reshape

_ORDINALS = ("1st", "2nd", "3rd")


def pairs_per_axis(value, rank, name):
    """Keras's ZeroPadding/Cropping argument for ``rank`` spatial axes: an int (every side), ``rank``
    ints (both sides of each axis) or ``rank`` (before, after) pairs -> ``rank`` pairs."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"`{name}` cannot be negative. Received: {name}={value}.")
        return ((int(value),) * 2,) * rank
    if not hasattr(value, "__len__") or len(value) != rank:
        count = "two" if rank == 2 else rank  # Keras's wording differs between its 2-D and 3-D layers
        raise ValueError(f"`{name}` should have {count} elements. Received: {name}={value}.")
    pairs = []
    for i, item in enumerate(value):
        item = (item, item) if isinstance(item, (int, np.integer)) else tuple(item)
        if len(item) != 2 or not all(isinstance(v, (int, np.integer)) and v >= 0 for v in item):
            raise ValueError(f"The `{_ORDINALS[i]} entry of {name}` argument must be a tuple of 2 non-negative "
                             f"integers. Received {name}={value}")
        pairs.append(tuple(int(v) for v in item))
    return tuple(pairs)


def spatial_axes(rank, data_format):
    first = 1 if data_format == "channels_last" else 2
    return tuple(range(first, first + rank))


def repeat(x, axis, times):
    """Each element of ``x`` repeated ``times`` times along ``axis`` (``np.repeat``)."""
    if times == 1:
        return x
    shape = tuple(x.shape)
    expanded = reshape(x, shape[:axis + 1] + (1,) + shape[axis + 1:])
    tiled = broadcast_to(expanded, shape[:axis + 1] + (times,) + shape[axis + 1:])
    return reshape(tiled, shape[:axis] + (shape[axis] * times,) + shape[axis + 1:])

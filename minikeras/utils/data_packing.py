"""``keras.utils.unpack_x_y_sample_weight`` and ``pack_x_y_sample_weight``: a batch as a custom
``train_step`` receives it, taken apart and put together as Keras 3 does."""


def unpack_x_y_sample_weight(data):
    """``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)`` (a list counts as a tuple) ->
    ``(x, y, sample_weight)``, with None for what is missing.

        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    """
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if 1 <= len(data) <= 3:
        return data + (None,) * (3 - len(data))
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, found: "
                     f"{data}")


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """The batch ``fit`` takes: ``x`` alone (``(x,)`` when ``x`` is itself a tuple or list),
    ``(x, y)`` or ``(x, y, sample_weight)``."""
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return x, y
    return x, y, sample_weight

"""Checked arguments and output shapes shared by the convolution layers, worded as Keras 3's."""
from minikeras import backend
from minikeras.ops.array import transpose


def standardize_tuple(value, n, name, allow_zero=False):
    """An int or ``n`` ints -> a tuple of ``n`` ints (Keras's ``standardize_tuple``)."""
    message = f"The `{name}` argument must be a tuple of {n} integers. Received {name}={value}"
    if isinstance(value, int) and not isinstance(value, bool):
        values = (value,) * n
    else:
        try:
            values = tuple(value)
        except TypeError:
            raise ValueError(message) from None
        if len(values) != n:
            raise ValueError(message)
        try:
            values = tuple(int(v) for v in values)
        except (TypeError, ValueError):
            raise ValueError(message) from None
    low = 0 if allow_zero else 1
    if any(v < low for v in values):
        raise ValueError(f"{message}, including values {set(v for v in values if v < low)} that do not satisfy "
                         f"`value {'>=' if allow_zero else '>'} 0`")
    return values


def standardize_padding(padding, allow_causal=False):
    padding = str(padding).lower()
    allowed = ("same", "causal", "valid") if allow_causal else ("same", "valid")
    if padding not in allowed:
        listed = "{" + ", ".join(repr(a) for a in allowed) + "}"
        raise ValueError(f"The `padding` argument must be a list/tuple or one of {listed}. Received: {padding}")
    return padding


def standardize_data_format(data_format):
    """'channels_last' or 'channels_first'; None is ``backend.image_data_format()``."""
    return backend.standardize_data_format(data_format)


def positive(value, name):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise ValueError(f"Invalid value for argument `{name}`. Expected a strictly positive value. "
                         f"Received {name}={value}.")
    return value


def check_strides_dilation(strides, dilation_rate):
    if max(strides) > 1 and max(dilation_rate) > 1:
        raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                         f"strides={strides} and dilation_rate={dilation_rate}")


def conv_output_shape(input_shape, filters, kernel_size, strides, padding, data_format, dilation_rate):
    """Keras's ``compute_conv_output_shape``: the output of a convolution or pooling window
    (None sizes stay None); an output size <= 0 is an error."""
    input_shape = tuple(input_shape)
    spatial = input_shape[1:-1] if data_format == "channels_last" else input_shape[2:]
    channels = input_shape[-1] if data_format == "channels_last" else input_shape[1]
    kernel_shape = tuple(kernel_size) + (channels, filters)
    if len(kernel_shape) != len(input_shape):
        raise ValueError(f"Kernel shape must have the same length as input, but received kernel of shape "
                         f"{kernel_shape} and input of shape {input_shape}.")
    out = []
    for n, k, s, d in zip(spatial, kernel_size, strides, dilation_rate):
        if n is None:
            out.append(None)
        elif padding == "valid":
            size = (n - d * (k - 1) - 1) // s + 1
            if size <= 0:
                raise ValueError(f"Computed output size would be zero or negative. Received `inputs "
                                 f"shape={input_shape}`, `kernel shape={kernel_shape}`, "
                                 f"`dilation_rate={list(dilation_rate)}`, `strides={list(strides)}`, "
                                 f"`padding={padding}`.")
            out.append(size)
        else:
            out.append((n - 1) // s + 1)
    if data_format == "channels_last":
        return (input_shape[0],) + tuple(out) + (filters,)
    return (input_shape[0], filters) + tuple(out)


def to_channels_last(x, data_format):
    """(batch, channels, *spatial) -> (batch, *spatial, channels) for 'channels_first'."""
    if data_format == "channels_last":
        return x
    return transpose(x, (0,) + tuple(range(2, x.ndim)) + (1,))


def from_channels_last(y, data_format):
    if data_format == "channels_last":
        return y
    return transpose(y, (0, y.ndim - 1) + tuple(range(1, y.ndim - 1)))


def channels_of(input_shape, data_format):
    return input_shape[-1] if data_format == "channels_last" else input_shape[1]

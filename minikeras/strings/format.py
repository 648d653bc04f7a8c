"""``mk.strings.format``: Tensors written into a template as TF prints them."""
import numpy as np

from minikeras.string_tensor import StringTensor, bytes_array, check_eager, is_string_value
from minikeras.tensor import Tensor, Variable


def _float_text(value, dtype):
    """TF's float printing: 6 (float64: 15) significant digits, or 9 (17) when those do not
    give the value back."""
    short, long_ = (6, 9) if dtype != np.float64 else (15, 17)
    text = f"%.{short}g" % value
    if np.isnan(value) or np.isinf(value) or dtype.type(float(text)) == value:
        return text.replace("inf", "inf")
    return f"%.{long_}g" % value


def _item_text(value, dtype):
    if dtype == object:
        return '"' + value.decode("utf-8", "replace") + '"'
    if dtype == bool:
        return "1" if value else "0"
    if dtype.kind == "f":
        return _float_text(value, dtype)
    return str(int(value))


def _array_text(array, summarize, level=0):
    if array.ndim == 0:
        return _item_text(array[()], array.dtype)
    n = array.shape[0]
    cut = summarize >= 0 and n > 2 * summarize
    indices = list(range(summarize)) + [None] + list(range(n - summarize, n)) if cut else list(range(n))
    if array.ndim == 1:
        parts = ["..." if i is None else _item_text(array[i], array.dtype) for i in indices]
        return "[" + " ".join(parts) + "]"
    joiner = "\n" + " " * (level + 1)
    parts = ["..." if i is None else _array_text(array[i], summarize, level + 1) for i in indices]
    return "[" + joiner.join(parts) + "]"


def _value(x):
    if isinstance(x, StringTensor) or is_string_value(x):
        return bytes_array(x)
    if isinstance(x, (Tensor, Variable)):
        return np.asarray(x.numpy())
    array = np.asarray(x)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    elif array.dtype == np.int64:
        array = array.astype(np.int32)
    return array


def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001 - TF's name
    """``template`` with each ``placeholder`` replaced by one of ``inputs`` printed as TF prints
    Tensors: ``[1 2 3]``, strings quoted, floats to 6 significant digits, and only the first
    and last ``summarize`` entries of a long dimension (all of them for -1).

    >>> mk.strings.format("x={} y={}", (3, [1.5, 2.0])).numpy()
    b'x=3 y=[1.5 2]'
    """
    check_eager("mk.strings.format")
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    pieces = template.split(placeholder)
    if len(pieces) - 1 != len(inputs):
        raise ValueError(f"The template expects {len(pieces) - 1} tensors, but the inputs only has {len(inputs)}. "
                         "Please ensure the number of placeholders in template matches inputs length.")
    out = pieces[0]
    for value, piece in zip(inputs, pieces[1:]):
        out += _array_text(_value(value), summarize) + piece
    return StringTensor.of_bytes(bytes_array(out))

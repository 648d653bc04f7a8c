"""What the ``mk.strings`` functions share: reading inputs as bytes arrays, making results."""
import numpy as np

from minikeras.errors import InvalidArgumentError
from minikeras.ragged import RaggedTensor
from minikeras.string_tensor import StringTensor, bytes_array, check_eager, is_string_value
from minikeras.tensor import Tensor, to_array


def strings_in(value, what):
    """``value`` (a string Tensor, str/bytes, nested lists or NumPy array of them) as an object
    array of bytes; refused inside compiled code and for numbers."""
    check_eager(f"mk.strings.{what}")
    if isinstance(value, RaggedTensor):
        raise TypeError(f"mk.strings.{what}: a RaggedTensor input is not supported; use .to_tensor() or the "
                        "rows one by one")
    if not is_string_value(value) and not (isinstance(value, (list, tuple)) and len(value) == 0):
        dtype = getattr(value, "dtype", type(value).__name__)
        raise TypeError(f"mk.strings.{what} expects strings (a string Tensor, str or bytes), received a value of "
                        f"dtype {dtype}")
    return bytes_array(value)


def strings_out(array):
    """An object array of bytes as a string Tensor."""
    return StringTensor.of_bytes(np.asarray(array, dtype=object) if not isinstance(array, np.ndarray) else array)


def numbers_out(array):
    return Tensor(to_array(np.asarray(array)))


def each(array, fn):
    """``fn`` applied to every element of the object array ``array``: an object array of results."""
    out = np.empty(array.shape, dtype=object)
    flat_in = array.reshape(-1)
    flat = out.reshape(-1)
    for i in range(flat_in.size):
        flat[i] = fn(flat_in[i])
    return out


def rows_out(array, rows_of, dtype):
    """The per-element sequences ``rows_of(element)`` of a scalar (a dense 1-D result) or a
    vector (a RaggedTensor), as TF returns them."""
    if array.ndim == 0:
        row = rows_of(array[()])
        out = np.empty(len(row), dtype=dtype)
        out[:] = row
        return strings_out(out) if dtype == object else numbers_out(out)
    if array.ndim == 1:
        return RaggedTensor.from_rows([rows_of(item) for item in array], dtype)
    raise ValueError(f"inputs of rank 0 or 1 are supported (a ragged result with one ragged dimension), received "
                     f"shape {array.shape}; apply it row by row")


def invalid(op, message):
    return InvalidArgumentError(None, op, f"{message} [Op:{op}]")


def utf8_chars(item):
    """The characters of a UTF-8 string as bytes (invalid bytes become U+FFFD, as TF's 'replace')."""
    return [c.encode("utf-8") for c in item.decode("utf-8", "replace")]

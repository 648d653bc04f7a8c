"""String Tensors: ``mk.string`` values held on the host as NumPy arrays of ``bytes``.

    t = mk.constant(["Hello", "wörld"])
    t                  # mk.Tensor([b'Hello' b'w\\xc3\\xb6rld'], shape=(2,), dtype=string)
    t.numpy()          # array([b'Hello', b'w\\xc3\\xb6rld'], dtype=object), as TF
    t[0] == "Hello"    # mk.Tensor(True, shape=(), dtype=bool)

Strings never reach jax: a ``StringTensor`` is a ``Tensor`` whose value is a NumPy object
array of ``bytes`` (``str`` is encoded as UTF-8, as TensorFlow does). ``mk.strings`` computes
on them, and the preprocessing layers (``TextVectorization``, ``StringLookup``, ``Hashing``)
turn them into numbers. Compiled code (``mk.function``, the steps of ``fit``) refuses them
with ``refusal`` 's message, which says where string work belongs.
"""
import numpy as np

from minikeras import _context
from minikeras.dtypes import string, string_refusal
from minikeras.errors import invalid_argument
from minikeras.tensor import Tensor, to_array


def refusal(what):
    """The TypeError raised when ``what`` meets a string inside compiled code."""
    return string_refusal(what)


def is_string_array(array):
    """Whether ``array`` (NumPy) holds strings: dtype str, bytes, or object of str/bytes."""
    kind = array.dtype.kind
    if kind in "SU":
        return True
    if kind != "O":
        return False
    return array.size > 0 and isinstance(array.flat[0], (str, bytes))


def is_string_value(value):
    """Whether ``value`` is a string Tensor, a str/bytes, or a (nested) sequence/array of them."""
    if isinstance(value, StringTensor):
        return True
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return is_string_array(value)
    if isinstance(value, (list, tuple)):
        first = value
        while isinstance(first, (list, tuple)) and first:
            first = first[0]
        return isinstance(first, (str, bytes, np.str_, np.bytes_))
    return False


def _encode(item):
    if isinstance(item, bytes):
        return bytes(item)
    if isinstance(item, str):
        return item.encode("utf-8")
    raise TypeError(f"A string Tensor holds str or bytes, received {item!r} of type {type(item).__name__}")


def bytes_array(value):
    """``value`` (str, bytes, nested lists or NumPy array of them, a StringTensor) as a NumPy
    object array of ``bytes``."""
    if isinstance(value, StringTensor):
        return value._value
    if isinstance(value, (str, bytes)):
        return _object_array([_encode(value)]).reshape(())
    array = np.asarray(value, dtype=object)
    out = np.empty(array.shape, dtype=object)
    flat = out.reshape(-1)
    for i, item in enumerate(array.reshape(-1)):
        flat[i] = _encode(item)
    return out


def _object_array(items):
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def tracing_here():
    """Whether this thread is tracing compiled code (``mk.function``, a compiled step).

    ``_context.call_state.traces`` is per thread: a pipeline's prefetch thread maps batches (string work
    included) while the main thread traces a step.
    """
    return bool(_context.call_state.traces)


def check_eager(what):
    """Raises ``refusal(what)`` when this thread traces compiled code."""
    if tracing_here():
        raise refusal(what)


class StringTensor(Tensor):
    """A Tensor of dtype ``mk.string``: a NumPy object array of ``bytes``, on the host.

    Made by ``mk.constant``/``mk.convert_to_tensor`` of strings, by datasets of strings and by
    ``mk.strings``. Indexing gives string Tensors, ``==``/``!=`` compare elementwise (bool
    Tensors), ``+`` concatenates; numeric ops refuse it.
    """

    __slots__ = ()

    def __init__(self, value):
        check_eager("Creating a string mk.Tensor")
        super().__init__(bytes_array(value))

    @classmethod
    def of_bytes(cls, array):
        """A StringTensor around ``array``, already an object array of bytes (not copied)."""
        out = object.__new__(cls)
        out._value = array
        return out

    @property
    def dtype(self):
        return string

    @property
    def device(self):
        return "host"

    def numpy(self):
        """The value as a NumPy object array of ``bytes`` (a 0-d string gives ``bytes``, as TF)."""
        value = self._value.copy()
        return value[()] if value.ndim == 0 else value

    def __array__(self, dtype=None, copy=None):
        return self._value if dtype is None else self._value.astype(dtype)

    def __repr__(self):
        text = repr(self._value[()]) if self._value.ndim == 0 else np.array2string(self._value, separator=" ")
        sep = "\n" if "\n" in text else ""
        return f"mk.Tensor({sep}{text}, shape={self.shape}, dtype=string)"

    __str__ = __repr__

    def __format__(self, spec):
        return format(repr(self), spec)

    def __bool__(self):
        raise TypeError("The truth value of a string mk.Tensor is not defined; compare it (t == b'...') first")

    def __getitem__(self, index):
        if isinstance(index, Tensor):
            index = np.asarray(index)
        elif isinstance(index, tuple):
            index = tuple(np.asarray(i) if isinstance(i, Tensor) else i for i in index)
        out = self._value[index]
        if not isinstance(out, np.ndarray):
            out = _object_array([out]).reshape(())
        return StringTensor.of_bytes(out)

    def _compare(self, other, equal):
        if other is None:
            return Tensor(to_array(not equal))
        if isinstance(other, Tensor) and not is_string_value(other):
            op = "Equal" if equal else "NotEqual"
            raise invalid_argument(op, f"cannot compute {op} as input #1(zero-based) was expected to be a string "
                                       f"tensor but is a {other.dtype.name} tensor")
        if not is_string_value(other):  # TF converts the other side to a string Tensor, and refuses numbers
            raise TypeError(f"Cannot convert {other!r} to a string mk.Tensor: a string Tensor compares with strings "
                            f"only (received {type(other).__name__})")
        try:
            result = np.equal(self._value, bytes_array(other)) if equal else np.not_equal(
                self._value, bytes_array(other))
        except ValueError:
            raise ValueError(f"Incompatible shapes for string comparison: {self.shape} and "
                             f"{np.shape(bytes_array(other))}") from None
        return Tensor(to_array(np.asarray(result, dtype=bool)))

    def __eq__(self, other):
        return self._compare(other, True)

    def __ne__(self, other):
        return self._compare(other, False)

    def __add__(self, other):
        if not is_string_value(other):
            raise TypeError(f"A string mk.Tensor can only be added to strings (concatenation), received "
                            f"{type(other).__name__}")
        return StringTensor.of_bytes(np.asarray(np.add(self._value, bytes_array(other)), dtype=object))

    def __radd__(self, other):
        if not is_string_value(other):
            raise TypeError(f"A string mk.Tensor can only be added to strings (concatenation), received "
                            f"{type(other).__name__}")
        return StringTensor.of_bytes(np.asarray(np.add(bytes_array(other), self._value), dtype=object))

    __hash__ = None


def string_tensor(value):
    """A string Tensor of ``value`` (refused inside compiled code)."""
    if isinstance(value, StringTensor):
        return value
    return StringTensor(value)


def wrap_array(array):
    """A Tensor for a pipeline value: a StringTensor for string arrays, else None."""
    if isinstance(array, np.ndarray) and is_string_array(array):
        return StringTensor.of_bytes(array if array.dtype == object else bytes_array(array))
    return None

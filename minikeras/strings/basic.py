"""Case, whitespace, lengths, substrings and joins (``tf.strings.lower`` ... ``reduce_join``)."""
import builtins

import numpy as np

from minikeras.ops.convert import normalize_axis
from minikeras.ragged import RaggedTensor
from minikeras.string_tensor import bytes_array
from minikeras.strings._common import each, invalid, numbers_out, strings_in, strings_out

_UNITS = ("BYTE", "UTF8_CHAR")


def _unit(unit, what):
    if unit not in _UNITS:
        raise ValueError(f"mk.strings.{what}: unit must be one of {list(_UNITS)}, received {unit!r}")
    return unit


def _case(input, encoding, what, ascii_fn, text_fn):
    array = strings_in(input, what)
    if encoding in ("", None):
        return strings_out(each(array, ascii_fn))  # TF: without an encoding only ASCII letters change
    if str(encoding).lower().replace("-", "") != "utf8":
        raise ValueError(f"mk.strings.{what}: encoding must be '' or 'utf-8', received {encoding!r}")
    return strings_out(each(array, lambda s: text_fn(s.decode("utf-8", "surrogateescape")).encode(
        "utf-8", "surrogateescape")))


def lower(input, encoding="", name=None):
    """Lower-cases each string: ASCII letters only, or every letter with ``encoding='utf-8'``.

    >>> mk.strings.lower("HéLLO É").numpy()
    b'h\\xc3\\xa9llo \\xc3\\x89'
    """
    return _case(input, encoding, "lower", bytes.lower, str.lower)


def upper(input, encoding="", name=None):
    """Upper-cases each string: ASCII letters only, or every letter with ``encoding='utf-8'``."""
    return _case(input, encoding, "upper", bytes.upper, str.upper)


def strip(input, name=None):
    """Removes leading and trailing ASCII whitespace from each string."""
    return strings_out(each(strings_in(input, "strip"), bytes.strip))


def _char_count(item):
    return len(item) - sum(1 for b in item if b & 0xC0 == 0x80)  # bytes that start a character


def length(input, unit="BYTE", name=None):
    """The length of each string in bytes (``unit='BYTE'``) or UTF-8 characters (int32)."""
    array = strings_in(input, "length")
    count = len if _unit(unit, "length") == "BYTE" else _char_count
    return numbers_out(np.vectorize(count, otypes=[np.int32])(array) if array.size else
                       np.zeros(array.shape, np.int32))


def _char_starts(item):
    return [i for i, b in enumerate(item) if b & 0xC0 != 0x80] + [len(item)]


def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002 - TF's argument name
    """``len`` bytes (or UTF-8 characters) of each string from ``pos`` (negative: from the end).

    ``pos`` and ``len`` are scalars or broadcast against ``input``. A substring running past the
    end is cut; a ``pos`` outside the string is an InvalidArgumentError, as in TF.
    """
    array = strings_in(input, "substr")
    by_char = _unit(unit, "substr") == "UTF8_CHAR"
    pos_a, len_a = np.asarray(pos), np.asarray(len)
    try:
        array_b, pos_b, len_b = np.broadcast_arrays(array, pos_a, len_a)
    except ValueError:
        raise invalid("Substr", f"pos {pos_a.shape} and len {len_a.shape} do not broadcast against input "
                      f"{array.shape}") from None
    out = np.empty(array_b.shape, dtype=object)
    flat = out.reshape(-1)
    for i, (item, p, n) in enumerate(zip(array_b.reshape(-1), pos_b.reshape(-1), len_b.reshape(-1))):
        starts = _char_starts(item) if by_char else None
        size = (builtins.len(starts) - 1) if by_char else builtins.len(item)
        p, n = int(p), int(n)
        if p > size or p < -size:
            raise invalid("Substr", f"pos {p} out of range for string {item!r} at index {i}")
        p = p % size if p < 0 else p
        end = min(size, p + max(n, 0))
        flat[i] = item[starts[p]:starts[end]] if by_char else item[p:end]
    return strings_out(out)


def join(inputs, separator="", name=None):
    """Joins the strings of several Tensors elementwise: ``join([a, b], '-')[i] = a[i] + '-' + b[i]``.

    The inputs have one shape, or are scalars (repeated).
    """
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"mk.strings.join expects a list of string Tensors, received {type(inputs).__name__}")
    arrays = [strings_in(x, "join") for x in inputs]
    shapes = {a.shape for a in arrays if a.ndim}
    if builtins.len(shapes) > 1:
        shown = " vs. ".join(str(list(a.shape)) for a in arrays if a.ndim)
        raise invalid("StringJoin", f"Input shapes do not match: {shown}")
    shape = shapes.pop() if shapes else ()
    sep = bytes_array(separator)[()]
    columns = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = sep.join(column[i] for column in columns)
    return strings_out(out)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """Joins the strings along ``axis`` (all axes by default), with ``separator`` between them.

    >>> mk.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator=",").numpy()
    array([b'a,b', b'c,d'], dtype=object)
    """
    if isinstance(inputs, RaggedTensor):
        return _reduce_join_rows(inputs, axis, keepdims, separator)
    array = strings_in(inputs, "reduce_join")
    sep = bytes_array(separator)[()]
    axes = normalize_axis(axis, array.ndim, "ReduceJoin")
    axes = tuple(range(array.ndim)) if axes is None else axes
    kept = [d for d in range(array.ndim) if d not in axes]
    moved = np.transpose(array, kept + list(axes))
    rows = moved.reshape(tuple(array.shape[d] for d in kept) + (-1,)) if array.ndim else moved.reshape(1)
    out = np.empty(rows.shape[:-1], dtype=object)
    flat_out, flat_rows = out.reshape(-1), rows.reshape(-1, rows.shape[-1])
    for i in range(flat_out.size):
        flat_out[i] = sep.join(flat_rows[i])
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else array.shape[d] for d in range(array.ndim)))
    return strings_out(out)


def _reduce_join_rows(ragged, axis, keepdims, separator):
    """``reduce_join`` of a RaggedTensor of strings: each row joined (axis -1 or 1, as
    ``tf.strings.reduce_join(chars, axis=-1)`` joins characters back into texts), or all values
    (axis None)."""
    if ragged.dtype != object:
        raise TypeError(f"mk.strings.reduce_join expects strings, received a RaggedTensor of {ragged.dtype}")
    sep = bytes_array(separator)[()]
    if axis is None:
        return strings_out(np.asarray(sep.join(bytes_array(ragged.values).tolist()), dtype=object))
    if axis not in (-1, 1):
        raise ValueError(f"mk.strings.reduce_join of a RaggedTensor joins its rows (axis=-1 or 1) or all its values "
                         f"(axis=None), received axis={axis}")
    out = np.empty(len(ragged), dtype=object)
    for i, row in enumerate(ragged.numpy()):
        out[i] = sep.join(row.tolist())
    return strings_out(out[:, None] if keepdims else out)

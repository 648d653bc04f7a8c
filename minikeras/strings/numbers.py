"""Strings to numbers and back (``to_number``, ``as_string``)."""
import re

import numpy as np

from minikeras.dtypes import as_dtype, float32, string
from minikeras.string_tensor import StringTensor, check_eager
from minikeras.strings._common import each, invalid, numbers_out, strings_in, strings_out
from minikeras.tensor import Tensor, Variable

_INT = re.compile(rb"\s*[+-]?[0-9]+\s*")
_FLOAT = re.compile(rb"\s*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan|"
                    rb"0[xX][0-9a-fA-F]+)\s*", re.IGNORECASE)


def to_number(string_tensor, out_type=float32, name=None):
    """Parses each string as a number of ``out_type`` (float32, float64, int32 or int64).

    Leading and trailing whitespace is allowed; anything else that is not a number (or an
    integer out of range) is an InvalidArgumentError, as in TF.

    >>> mk.strings.to_number(["1.5", " 2"]).numpy()
    array([1.5, 2. ], dtype=float32)
    """
    array = strings_in(string_tensor, "to_number")
    dtype = as_dtype(out_type)
    if dtype.kind not in "fi":
        raise TypeError(f"mk.strings.to_number: out_type must be a float or int dtype, received {out_type!r}")
    integer = dtype.kind == "i"
    info = np.iinfo(dtype) if integer else None

    def parse(item):
        if (_INT if integer else _FLOAT).fullmatch(item) is None:
            raise invalid("StringToNumber", f"StringToNumberOp could not correctly convert string: "
                          f"{item.decode('utf-8', 'replace')}")
        text = item.strip()
        if integer:
            value = int(text)
            if not info.min <= value <= info.max:
                raise invalid("StringToNumber", f"StringToNumberOp could not correctly convert string: "
                              f"{item.decode('utf-8', 'replace')}")
            return value
        if text.lower().lstrip(b"+-").startswith(b"0x"):
            return float(int(text, 16))
        return float(text)
    return numbers_out(each(array, parse).astype(dtype))


def _format_number(value, dtype, precision, scientific, shortest, width, fill):
    if dtype == bool:
        text = "true" if value else "false"
    elif dtype.kind in "iu":
        text = "%d" % value
    elif shortest:
        text = "%g" % value
    else:
        code = "e" if scientific else "f"
        text = f"%.{precision if precision >= 0 else 6}{code}" % value
    if width > len(text):
        pad = fill or " "
        if pad == "0" and text[:1] in "+-":
            text = text[0] + text[1:].rjust(width - 1, "0")
        else:
            text = text.rjust(width, pad)
    return text.encode("ascii")


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    """Each number as a string: ints as ``%d``, bools as true/false, floats as ``%f`` (6
    decimals, or ``precision``), ``%e`` with ``scientific``, ``%g`` with ``shortest``; padded on
    the left with ``fill`` (a space by default) to ``width``. Strings pass through.

    >>> mk.strings.as_string([1.5, -2.0], precision=2).numpy()
    array([b'1.50', b'-2.00'], dtype=object)
    """
    check_eager("mk.strings.as_string")
    if isinstance(input, StringTensor) or getattr(input, "dtype", None) == string:
        return strings_out(strings_in(input, "as_string"))
    if scientific and shortest:
        raise ValueError("mk.strings.as_string: cannot use both scientific and shortest")
    if fill not in ("", " ", "0"):
        raise ValueError(f"mk.strings.as_string: fill must be '', ' ' or '0', received {fill!r}")
    array = np.asarray(input.numpy() if isinstance(input, (Tensor, Variable)) else input)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"mk.strings.as_string expects numbers or booleans, received dtype {array.dtype}")
    if array.dtype == np.float64 and not isinstance(input, (Tensor, Variable)):
        array = array.astype(np.float32)  # as a Python float becomes a float32 Tensor
    dtype = array.dtype
    return strings_out(each(array.astype(object), lambda v: _format_number(
        v, dtype, precision, scientific, shortest, width, fill)))

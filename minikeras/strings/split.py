"""Splitting strings into words and characters (``split``, ``unicode_split``, ``unicode_decode``).

A scalar input gives a 1-D Tensor; a vector gives an ``mk.RaggedTensor`` (one row per
string), as TF does.
"""
import numpy as np

from minikeras.string_tensor import bytes_array
from minikeras.strings._common import rows_out, strings_in

_ENCODINGS = ("UTF-8", "UTF8")


def split(input, sep=None, maxsplit=-1, name=None):
    """Splits each string at ``sep`` (runs of ASCII whitespace when None, and then no empty
    pieces), at most ``maxsplit`` times.

    >>> mk.strings.split(["a b", "c"]).to_list()
    [[b'a', b'b'], [b'c']]
    """
    array = strings_in(input, "split")
    separator = None if sep is None or sep == "" or sep == b"" else bytes_array(sep)[()]
    return rows_out(array, lambda s: s.split(separator, maxsplit), object)


def _check_encoding(encoding, errors, what):
    if str(encoding).upper() not in _ENCODINGS:
        raise ValueError(f"mk.strings.{what}: only input_encoding='UTF-8' is supported, received {encoding!r}")
    if errors not in ("replace", "ignore", "strict"):
        raise ValueError(f"mk.strings.{what}: errors must be 'replace', 'ignore' or 'strict', received {errors!r}")


def _decode(item, errors, replacement_char):
    text = item.decode("utf-8", errors)
    if errors == "replace" and replacement_char != 0xFFFD:
        text = text.replace("\ufffd", chr(replacement_char))
    return text


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):
    """The characters of each UTF-8 string, each one a string (invalid bytes become
    ``replacement_char``)."""
    _check_encoding(input_encoding, errors, "unicode_split")
    array = strings_in(input, "unicode_split")
    return rows_out(array, lambda s: [c.encode("utf-8") for c in _decode(s, errors, replacement_char)], object)


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533, replace_control_characters=False,
                   name=None):
    """The Unicode code points of each UTF-8 string (int32)."""
    _check_encoding(input_encoding, errors, "unicode_decode")
    array = strings_in(input, "unicode_decode")
    return rows_out(array, lambda s: [ord(c) for c in _decode(s, errors, replacement_char)], np.int32)

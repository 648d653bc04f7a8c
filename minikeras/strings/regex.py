"""``regex_replace`` and ``regex_full_match`` with RE2's meaning, on Python's ``re``.

TF matches RE2 patterns against UTF-8 text: ``.`` is one character, ``\\w``, ``\\d`` and
``\\s`` are ASCII classes, POSIX classes (``[[:alpha:]]``) work inside brackets, and a
rewrite refers to groups as ``\\1`` (``\\0``: the whole match). Strings are decoded as UTF-8
(invalid bytes kept as they are) and the pattern is compiled with ``re.ASCII``, which gives
the same matches for the patterns the two dialects share. RE2's Unicode classes (``\\pL``)
have no equivalent in ``re`` and are refused.
"""
import functools
import re

import numpy as np

from minikeras.string_tensor import bytes_array
from minikeras.strings._common import each, numbers_out, strings_in, strings_out

_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z", "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}


def _text(pattern):
    if isinstance(pattern, (bytes, np.bytes_)):
        return bytes(pattern).decode("utf-8", "surrogateescape")
    if not isinstance(pattern, str):
        pattern = bytes_array(pattern)[()].decode("utf-8", "surrogateescape")
    return pattern


@functools.lru_cache(maxsize=256)
def compiled(pattern):
    """``pattern`` (RE2 syntax) compiled with Python's ``re``."""
    if re.search(r"(?<!\\)(\\\\)*\\[pP]", pattern):
        raise ValueError(f"RE2 Unicode classes (\\p...) are not supported in patterns; received {pattern!r}")
    translated = re.sub(r"\[:(\^?)([a-z]+):\]", lambda m: _posix(m, pattern), pattern)
    try:
        return re.compile(translated, re.ASCII)
    except re.error as error:
        raise ValueError(f"Invalid pattern {pattern!r}: {error}") from None


def _posix(match, pattern):
    name = match.group(2)
    if name not in _POSIX or match.group(1):
        raise ValueError(f"Unsupported POSIX class [:{match.group(1)}{name}:] in pattern {pattern!r}")
    return _POSIX[name]


@functools.lru_cache(maxsize=256)
def _rewrite(rewrite):
    """RE2's rewrite string as a function of a match: ``\\N`` is group N, ``\\\\`` a backslash."""
    parts = []
    i = 0
    while i < len(rewrite):
        c = rewrite[i]
        if c == "\\" and i + 1 < len(rewrite):
            nxt = rewrite[i + 1]
            if nxt.isdigit():
                parts.append(int(nxt))
            elif nxt == "\\":
                parts.append("\\")
            else:
                raise ValueError(f"Invalid rewrite pattern {rewrite!r}: a backslash is followed by a digit or a "
                                 "backslash")
            i += 2
            continue
        parts.append(c)
        i += 1
    return lambda m: "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Replaces the matches of ``pattern`` in each string with ``rewrite`` (every match, or the
    first one with ``replace_global=False``).

    >>> mk.strings.regex_replace("Hello, World!", "[^a-z ]", "").numpy()
    b'ello orld'
    """
    array = strings_in(input, "regex_replace")
    regex, repl = compiled(_text(pattern)), _rewrite(_text(rewrite))
    count = 0 if replace_global else 1

    def replace(item):
        text = item.decode("utf-8", "surrogateescape")
        return regex.sub(repl, text, count=count).encode("utf-8", "surrogateescape")
    return strings_out(each(array, replace))


def regex_full_match(input, pattern, name=None):
    """Whether each whole string matches ``pattern`` (a bool Tensor)."""
    array = strings_in(input, "regex_full_match")
    regex = compiled(_text(pattern))
    out = np.zeros(array.shape, dtype=bool)
    flat, items = out.reshape(-1), array.reshape(-1)
    for i in range(items.size):
        flat[i] = regex.fullmatch(items[i].decode("utf-8", "surrogateescape")) is not None
    return numbers_out(out)

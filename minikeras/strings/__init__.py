"""``mk.strings``: the ``tf.strings`` functions that tutorials use, on host string Tensors.

Each takes string Tensors (or str/bytes/lists/NumPy arrays of them) and works element by
element on the bytes, with TF's units (``BYTE`` or ``UTF8_CHAR``) and regex dialect (RE2,
see ``regex``). Results that TF makes ragged are 1-D Tensors for a scalar input and
``mk.RaggedTensor`` for a vector. Like the string Tensors they work on, they run eagerly
and are refused inside compiled code.
"""
from minikeras.strings.basic import join, length, lower, reduce_join, strip, substr, upper  # noqa: F401
from minikeras.strings.format import format  # noqa: F401,A004
from minikeras.strings.numbers import as_string, to_number  # noqa: F401
from minikeras.strings.regex import regex_full_match, regex_replace  # noqa: F401
from minikeras.strings.split import split, unicode_decode, unicode_split  # noqa: F401

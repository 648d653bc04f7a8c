"""mk.strings against TensorFlow 2.21's tf.strings on the cases of
tests/fixtures/strings/make_strings_fixture.py (results in strings_tf.txt)."""
import ast
import builtins
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras.ragged import RaggedTensor

_FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "strings", "strings_tf.txt")
with open(_FIXTURE) as _f:
    CASES = [ast.literal_eval(line) for line in _f if line.strip()]


def _plain(x):
    if isinstance(x, list):
        return [_plain(v) for v in x]
    if isinstance(x, float) and not np.isfinite(x):
        return repr(x)
    return x


def _value(x):
    if isinstance(x, RaggedTensor):
        return x.to_list()
    return _plain(np.asarray(x.numpy()).tolist())


def _arg(fn, i, arg):
    if (fn == "join" and i == 0) or (fn == "format" and i == 1):
        return [mk.constant(a) for a in arg]
    return arg


@pytest.mark.parametrize("fn,args,kwargs,expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_tensorflow(fn, args, kwargs, expected):
    kwargs = dict(kwargs)
    if "out_type" in kwargs:
        kwargs["out_type"] = mk.as_dtype(kwargs["out_type"])
    call = getattr(mk.strings, fn)
    if isinstance(expected, tuple) and expected[:1] == ("error",):
        with pytest.raises(getattr(mk.errors, expected[1], None) or getattr(builtins, expected[1])):
            call(*[_arg(fn, i, a) for i, a in enumerate(args)], **kwargs)
        return
    got = _value(call(*[_arg(fn, i, a) for i, a in enumerate(args)], **kwargs))
    assert got == expected


def test_ragged_results_and_padding():
    words = mk.strings.split(["a b c", "d"])
    assert isinstance(words, RaggedTensor) and words.shape == (2, None)
    assert words.to_tensor().numpy().tolist() == [[b"a", b"b", b"c"], [b"d", b"", b""]]  # TF pads with b''
    assert words.row_lengths().numpy().tolist() == [3, 1]
    assert words[1].numpy().tolist() == [b"d"]
    codes = mk.strings.unicode_decode(["hé", "a"], "UTF-8")
    assert codes.to_tensor().numpy().tolist() == [[104, 233], [97, 0]]


def test_strings_refused_in_compiled_code_and_numbers_refused():
    with pytest.raises(TypeError, match="expects strings"):
        mk.strings.lower(mk.constant([1.0]))

    def body(x):
        return mk.strings.as_string(x)
    with pytest.raises(TypeError, match="data pipeline"):
        mk.function(body, autograph=False)(mk.constant([1.0]))

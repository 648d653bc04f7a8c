"""mk.linalg against TensorFlow itself: values, gradients and second-order gradients of the
functions in ``fixtures/tf/linalg_cases.py``, as TF 2.21 computed them
(``fixtures/tf/make_linalg_fixtures.py``). This pins TF's conventions that a JAX reference
does not share: eigh and cholesky read the lower triangle, and eigh's gradient is lower
triangular."""
import os
import sys

import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "tf")
sys.path.insert(0, HERE)
from linalg_cases import cases  # noqa: E402

REF = np.load(os.path.join(HERE, "linalg_grads.npz"))
CASES = cases(mk.linalg, mk, REF["w"])


def _pattern(shape):
    return np.cos(np.arange(int(np.prod(shape)))).reshape(shape).astype(np.float32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    fn, arg = CASES[name]
    x = mk.constant(REF[f"input_{arg}"])
    with mk.GradientTape() as outer:
        outer.watch(x)
        with mk.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        g = inner.gradient(y, x)
        z = mk.reduce_sum(g * _pattern(g.shape))
    assert_close(y, REF[f"{name}_value"], what="value")
    assert_close(g, REF[f"{name}_grad"], what="gradient")
    assert_close(outer.gradient(z, x), REF[f"{name}_grad2"], rtol=1e-3, atol=1e-3, what="second order")

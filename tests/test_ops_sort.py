"""mk.sort, mk.argsort and mk.math.top_k: values and tie order checked on TF 2.21, gradients
of the sorted values (first and second order) against JAX."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import check_grad, rand

import minikeras as mk


def test_values_and_ties_match_tf():
    # TF 2.21 outputs for the same calls
    np.testing.assert_array_equal(mk.sort([3, 1, 2, 1], direction="DESCENDING"), [3, 2, 1, 1])
    np.testing.assert_array_equal(mk.argsort([3.0, 1.0, 2.0, 1.0], direction="DESCENDING"), [0, 2, 1, 3])
    np.testing.assert_array_equal(mk.argsort([3.0, 1.0, 2.0, 1.0]), [1, 3, 2, 0])
    values, indices = mk.math.top_k([1.0, 3.0, 3.0, 2.0], k=2)
    np.testing.assert_array_equal(values, [3.0, 3.0])
    np.testing.assert_array_equal(indices, [1, 2])
    assert indices.dtype == mk.int32 and mk.argsort([2, 1]).dtype == mk.int32


@pytest.mark.parametrize("axis, direction", [(-1, "ASCENDING"), (0, "DESCENDING")])
def test_sort_gradient(axis, direction):
    def ref(x):
        s = jnp.sort(x, axis=axis)
        return jnp.flip(s, axis) if direction == "DESCENDING" else s

    check_grad(lambda x: mk.sort(x, axis=axis, direction=direction), ref, rand(3, 4))


def test_top_k_gradient():
    x = rand(2, 5, seed=2)
    out = check_grad(lambda x: mk.math.top_k(x, k=3).values, lambda x: jax.lax.top_k(x, 3)[0], x)
    assert out.shape == (2, 3)


def test_argsort_has_no_gradient():
    x = mk.constant([2.0, 1.0])
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.cast(mk.argsort(x), mk.float32)
    assert tape.gradient(y, x) is None


def test_errors():
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"at least k columns. Had 3, needed 5.*TopKV2"):
        mk.math.top_k([1.0, 2.0, 3.0], k=5)
    with pytest.raises(ValueError, match="direction should be one of ASCENDING, DESCENDING"):
        mk.sort([1.0], direction="UP")
    with pytest.raises(mk.errors.InvalidArgumentError, match="axis 2 is out of range"):
        mk.argsort(mk.ones((2, 2)), axis=2)

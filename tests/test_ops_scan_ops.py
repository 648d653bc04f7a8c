"""mk.cumsum and mk.math.cumprod with exclusive/reverse: values checked on TF 2.21, first and
second-order gradients against jax.numpy's cumsum/cumprod."""
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import check_grad, rand

import minikeras as mk


def _reference(scan, identity, axis, exclusive, reverse):
    def fn(x):
        if reverse:
            x = jnp.flip(x, axis)
        out = scan(x, axis=axis)
        if exclusive:
            first = jnp.full_like(jnp.take(out, jnp.arange(1), axis=axis), identity)
            out = jnp.concatenate([first, jnp.take(out, jnp.arange(x.shape[axis] - 1), axis=axis)], axis=axis)
        return jnp.flip(out, axis) if reverse else out
    return fn


FLAGS = [(0, False, False), (1, True, False), (1, False, True), (0, True, True)]


@pytest.mark.parametrize("axis, exclusive, reverse", FLAGS)
def test_cumsum(axis, exclusive, reverse):
    check_grad(lambda x: mk.cumsum(x, axis=axis, exclusive=exclusive, reverse=reverse),
               _reference(jnp.cumsum, 0.0, axis, exclusive, reverse), rand(3, 4))


@pytest.mark.parametrize("axis, exclusive, reverse", FLAGS)
def test_cumprod(axis, exclusive, reverse):
    check_grad(lambda x: mk.math.cumprod(x, axis=axis, exclusive=exclusive, reverse=reverse),
               _reference(jnp.cumprod, 1.0, axis, exclusive, reverse), rand(3, 4, low=0.5, high=1.5))


def test_values_match_tf():
    # TF 2.21: tf.cumsum([1, 2, 3], exclusive=True, reverse=True) and tf.math.cumprod([1., 2, 3], exclusive=True)
    np.testing.assert_array_equal(mk.cumsum([1, 2, 3], exclusive=True, reverse=True), [5, 3, 0])
    np.testing.assert_array_equal(mk.math.cumprod([1.0, 2.0, 3.0], exclusive=True), [1.0, 1.0, 2.0])
    assert mk.math.cumsum is mk.cumsum


def test_bad_axis():
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"axis 2 is out of range.*\(2, 3\).*Cumsum"):
        mk.cumsum(mk.ones((2, 3)), axis=2)

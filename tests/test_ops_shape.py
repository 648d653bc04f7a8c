"""mk.shape, mk.size, mk.rank, checked against TensorFlow 2.21's tf.shape, tf.size, tf.rank."""
import numpy as np
import pytest

import minikeras as mk


def test_eager_values_as_tensorflow():
    # TF 2.21: [2 3] int32, 6, 2, and [] of shape (0,) for a scalar
    s = mk.shape(mk.zeros((2, 3)))
    assert s.dtype == mk.int32 and s.numpy().tolist() == [2, 3]
    assert int(mk.size(mk.zeros((2, 3)))) == 6 and int(mk.rank(mk.zeros((2, 3)))) == 2
    assert mk.shape(mk.constant(1.0)).shape == (0,)
    assert mk.shape([[1, 2, 3]]).numpy().tolist() == [1, 3]
    with pytest.raises(mk.errors.InvalidArgumentError, match="'out_type' of float32 is not in the list"):
        mk.shape(mk.zeros(2), out_type=mk.float32)


def test_symbolic_sizes_inside_mk_function():
    @mk.function(input_signature=[mk.TensorSpec([None, 3, None])])
    def f(x):
        s = mk.shape(x)
        assert isinstance(s, mk.Tensor) and s.shape == (3,)
        return s, s[0], s[1:], mk.size(x), mk.rank(x), mk.ones(s[1:]), mk.fill(s[:1], 2.0)

    # TF 2.21: [2 3 4], 2, [3 4], 24, 3
    s, first, rest, size, rank, ones, filled = f(mk.zeros((2, 3, 4)))
    assert s.numpy().tolist() == [2, 3, 4] and int(first) == 2 and rest.numpy().tolist() == [3, 4]
    assert int(size) == 24 and int(rank) == 3
    assert ones.shape == (3, 4) and filled.numpy().tolist() == [2.0, 2.0]
    assert [int(t) for t in f(mk.zeros((5, 3, 1)))[3:5]] == [15, 3]
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(f(mk.zeros((1, 3, 6)))[0].numpy(), [1, 3, 6])

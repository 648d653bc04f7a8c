"""``ops.staging.stage`` outside ``mk.function`` (as an eager RNN layer calls it, its weights
carried): the carried Variables get their own values back, never the jaxpr's tracers, also when
the staged function raises."""
import jax
import numpy as np
import pytest

import minikeras as mk
from minikeras.ops.staging import stage


def test_stage_outside_a_trace_restores_carried_variables():
    w = mk.Variable([1.0, 2.0], name="w")
    b = mk.Variable(3.0, name="b")
    staged = stage(lambda x: x * w + b, [jax.ShapeDtypeStruct((2,), np.float32)], carried=[w, b])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    assert float(b.numpy()) == 3.0
    outs, written = staged.call(np.float32([1, 1]), np.float32([5, 6]), np.float32(1))
    np.testing.assert_array_equal(outs[0], [6.0, 7.0])  # the carried values are the jaxpr's inputs
    assert written == []


def test_stage_outside_a_trace_restores_carried_variables_when_the_function_raises():
    w = mk.Variable([1.0, 2.0], name="w")

    def fn():
        w.assign_add([1.0, 1.0])  # a traced value assigned outside mk.function: an error
        return w

    with pytest.raises(ValueError, match="Cannot assign a traced value to mk.Variable 'w'"):
        stage(fn, [], carried=[w])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    w.assign([4.0, 5.0])  # still an ordinary Variable
    np.testing.assert_array_equal(w.numpy(), [4.0, 5.0])

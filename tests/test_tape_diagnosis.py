"""Unconnected gradients: None, zeros, or an error that says why (minikeras.tape.diagnosis)."""
import numpy as np
import pytest

import minikeras as mk

X = np.array([0.3, -1.2, 2.0], np.float32)


def _unconnected_setup():
    x = mk.constant(1.5)
    never = mk.Variable(1.0, name="never_read")
    outside = mk.constant(2.0)
    rounded = mk.constant(0.7)
    count = mk.constant(3)
    with mk.GradientTape() as tape:
        with pytest.warns(UserWarning, match="int32"):
            tape.watch([x, rounded, count])
        y = x * x + mk.round(rounded) * 2.0 + mk.cast(count, mk.float32)
    return tape, y, [x, never, outside, rounded, count]


def test_unconnected_none_is_the_default():
    tape, y, sources = _unconnected_setup()
    grads = tape.gradient(y, sources)
    assert float(grads[0]) == 3.0 and grads[1:] == [None, None, None, None]


def test_unconnected_zero_gives_zeros_of_the_source_shape_and_dtype():
    tape, y, sources = _unconnected_setup()
    grads = tape.gradient(y, sources, unconnected_gradients="zero")
    assert [float(g) for g in grads] == [3.0, 0.0, 0.0, 0.0, 0.0]
    assert grads[4].dtype == mk.int32 and grads[1].dtype == mk.float32
    v = mk.Variable(np.ones((2, 3), np.float32))
    with mk.GradientTape() as tape:
        y = mk.constant(1.0) * 2.0
    g = tape.gradient(y, v, unconnected_gradients=mk.UnconnectedGradients.ZERO)
    assert g.shape == (2, 3) and float(mk.reduce_sum(g)) == 0.0


def test_unconnected_raise_names_each_source_and_why():
    tape, y, sources = _unconnected_setup()
    with pytest.raises(ValueError) as info:
        tape.gradient(y, sources, unconnected_gradients="raise")
    lines = str(info.value).splitlines()
    assert len(lines) == 5  # a header and one line per missing source
    never, outside, rounded, count = lines[1:]
    assert "source 1" in never and "'never_read'" in never and "never watched" in never
    assert "source 2" in outside and "never watched" in outside   # sources are named by position
    assert "source 3" in rounded and "`round`" in rounded and "not differentiable" in rounded
    assert "source 4" in count and "int32" in count and "floating" in count


def test_unconnected_raise_for_a_target_computed_after_recording():
    x = mk.constant(1.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    z = x * 3.0
    with pytest.raises(ValueError, match="not computed from it while this tape recorded"):
        tape.gradient(z, x, unconnected_gradients="raise")
    del y


@pytest.mark.parametrize("blocker, op", [
    ("argmax", lambda x: mk.cast(mk.argmax(x), mk.float32)),
    ("cast", lambda x: mk.cast(mk.cast(x, mk.int32), mk.float32)),
    ("greater", lambda x: mk.cast(x > 0.0, mk.float32)),
    ("stop_gradient", lambda x: mk.stop_gradient(x)),
], ids=["argmax", "cast-to-int", "comparison", "stop_gradient"])
def test_non_differentiable_ops_give_none_and_are_named(blocker, op):
    x = mk.constant(X)
    with mk.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mk.reduce_sum(op(x)) * 2.0
    assert tape.gradient(y, x) is None
    with pytest.raises(ValueError, match=f"`{blocker}"):
        tape.gradient(y, x, unconnected_gradients="raise")


def test_unknown_unconnected_gradients_value_is_an_error():
    x = mk.constant(1.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="'none', 'zero' or 'raise'.*'ones'"):
        tape.gradient(y, x, unconnected_gradients="ones")


def test_stop_gradient_blocks_only_its_branch():
    x = mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.stop_gradient(x * x) + x * 2.0
    assert float(y) == 15.0 and float(tape.gradient(y, x)) == 2.0


def test_bad_source_is_an_error():
    x = mk.constant(1.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="not mk.Tensor or mk.Variable"):
        tape.gradient(y, [x, 3.0])

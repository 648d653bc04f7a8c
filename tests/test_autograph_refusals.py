"""What TensorFlow's AutoGraph refuses, refused alike instead of computing a wrong value:
a ``return`` on only one path of an ``if`` on a traced Tensor (TF: "the else branch must also
have a return statement."), and a Python list from before a loop over a traced Tensor changed
inside it (TF: an InaccessibleTensorError; here AutoGraph's advice, a TensorArray, and the
lines)."""
import inspect

import numpy as np
import pytest

import minikeras as mk


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def returns_on_one_path(x):
    if x > 0:
        return x


def returns_in_a_nested_if(x):
    if x > 0:
        if x > 1:
            return x
    return -x


def returns_on_both_paths(x):
    if x > 0:
        return x
    return -x


def returns_inside_a_tensor_loop(x):
    for i in mk.range(3):
        if x[i] > 0:
            return x[i]
    return -1.0


def test_return_on_one_path_of_a_tensor_if_is_refused_as_tf_does():
    line = _line(returns_on_one_path, "if x > 0")
    with pytest.raises(ValueError, match=rf"the `if` at line {line}: the else branch must also have a return stat"):
        mk.function(returns_on_one_path)(mk.constant(-1.0))
    line = _line(returns_in_a_nested_if, "if x > 1")
    with pytest.raises(ValueError, match=rf"the `if` at line {line}: the else branch must also have a return"):
        mk.function(returns_in_a_nested_if)(mk.constant(2.0))
    assert returns_on_one_path(mk.constant(-1.0)) is None  # eagerly it is Python's if


def test_returns_on_every_path_still_work():
    both = mk.function(returns_on_both_paths)
    assert [float(both(mk.constant(v))) for v in (2.0, -3.0)] == [2.0, 3.0]
    loop = mk.function(returns_inside_a_tensor_loop)
    assert float(loop(mk.constant([-1.0, 2.0, 3.0]))) == 2.0
    assert float(loop(mk.constant([-1.0, -2.0, -3.0]))) == -1.0


def appends_in_a_tensor_loop(x):
    out = []
    for i in mk.range(3):
        out.append(x * mk.cast(i, "float32"))
    return mk.stack(out)


def appends_in_python_loops(x):
    out = []
    for i in range(3):
        out.append(x * i)
    total = mk.zeros_like(x)
    for i in mk.range(2):
        parts = []  # a list made in the body: fine
        parts.append(x)
        total = total + mk.add_n(parts)
    return mk.stack(out), total


def test_list_append_in_a_tensor_loop_names_lines_and_the_tensor_array():
    loop, append = _line(appends_in_a_tensor_loop, "for i in"), _line(appends_in_a_tensor_loop, "out.append")
    with pytest.raises(ValueError, match=rf"the `for` loop at line {loop}: `out.append\(\.\.\.\)` at line {append} "
                                         r"changes the Python list 'out'.*Use a TensorArray"):
        mk.function(appends_in_a_tensor_loop)(mk.constant(2.0))
    stacked, total = mk.function(appends_in_python_loops)(mk.constant(2.0))
    np.testing.assert_allclose(stacked.numpy(), [0.0, 2.0, 4.0])
    assert float(total) == 4.0

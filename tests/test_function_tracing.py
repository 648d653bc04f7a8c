"""mk.function runs the Python body once per trace, as tf.function does (the examples of
TensorFlow's guide "Better performance with tf.function")."""
import numpy as np
import pytest

import minikeras as mk


def test_python_side_effects_happen_once_per_new_signature():
    traced = []

    @mk.function
    def f(x):
        traced.append(x.shape)
        return x + 1.0

    f(mk.constant(1.0))
    f(mk.constant(2.0))
    f(mk.constant([1.0, 2.0]))
    f(mk.constant([3.0, 4.0]))
    assert traced == [(), (2,)]
    assert f.experimental_get_tracing_count() == 2


def test_python_values_are_part_of_the_signature():
    traced = []

    @mk.function
    def f(x, n):
        traced.append(n)
        return x * n

    f(mk.constant(1.0), 2)
    f(mk.constant(1.0), 2)
    f(mk.constant(1.0), 3)
    assert traced == [2, 3]


def test_the_guides_counter_updates_the_variable_on_every_call():
    class Model(mk.Module):
        def __init__(self):
            super().__init__()
            self.v = mk.Variable(0)
            self.counter = 0

        @mk.function
        def __call__(self):
            if self.counter == 0:
                self.counter += 1  # a Python side effect: runs once, while tracing
                self.v.assign_add(1)
            return self.v

    m = Model()
    assert [int(m()) for _ in range(3)] == [1, 2, 3]


def test_an_assignment_in_a_python_branch_taken_at_trace_time_is_kept():
    v = mk.Variable(0.0)
    settings = {"update": True}

    @mk.function
    def step(x):
        if settings["update"]:
            v.assign_add(x)
        return v.read_value()

    step(mk.constant(1.0))
    settings["update"] = False  # Python state read at trace time only: the program keeps the update
    step(mk.constant(1.0))
    assert float(v) == 2.0


def test_a_first_trace_that_creates_variables_is_traced_again_as_in_tensorflow():
    traced = []

    class Scale(mk.Module):
        def __init__(self):
            super().__init__()
            self.w = None

        @mk.function
        def __call__(self, x):
            traced.append(1)
            if self.w is None:
                self.w = mk.Variable(2.0)
            return x * self.w

    s = Scale()
    assert float(s(mk.constant(3.0))) == 6.0
    assert float(s(mk.constant(4.0))) == 8.0
    assert len(traced) == 2  # the creating trace and the one that reads the Variable
    s.w.assign(5.0)
    assert float(s(mk.constant(1.0))) == 5.0
    assert len(traced) == 2


def test_a_variable_read_first_inside_a_cond_branch_keeps_its_value_in_the_other():
    v = mk.Variable(0.0)

    @mk.function
    def bump(x):
        return mk.cond(x > 0.0, lambda: v.assign_add(1.0).read_value(), lambda: v.read_value() * 1.0)

    assert float(bump(mk.constant(1.0))) == 1.0
    assert float(bump(mk.constant(-1.0))) == 1.0
    assert float(v) == 1.0


def test_frequent_retracing_warns_like_tf_function():
    @mk.function
    def f(x, n):
        return x * n

    with pytest.warns(UserWarning, match="5 out of the last 5 calls to .* triggered mk.function retracing"):
        for n in range(5):
            f(mk.constant(1.0), n)


def test_the_program_reads_a_variable_first_touched_inside_a_jax_transformation():
    w = mk.Variable(np.array([1.0, 2.0], np.float32))

    @mk.function
    def jac(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = x * w
        return tape.jacobian(y, x)

    np.testing.assert_allclose(jac(mk.constant([3.0, 4.0])).numpy(), np.diag([1.0, 2.0]))
    w.assign([5.0, 6.0])
    np.testing.assert_allclose(jac(mk.constant([3.0, 4.0])).numpy(), np.diag([5.0, 6.0]))

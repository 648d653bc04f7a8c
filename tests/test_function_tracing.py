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


# -- input_signature, get_concrete_function (tf.function's API) ---------------------------------
def test_input_signature_converts_python_values_and_checks_tensors():
    @mk.function(input_signature=[mk.TensorSpec(shape=[None], dtype=mk.int32)])
    def next_collatz(x):
        return mk.where(x % 2 == 0, x // 2, 3 * x + 1)

    np.testing.assert_array_equal(next_collatz(mk.constant([1, 2])).numpy(), [4, 1])
    np.testing.assert_array_equal(next_collatz([3, 4, 5]).numpy(), [10, 2, 16])  # converted to int32
    with pytest.raises(TypeError, match=r"next_collatz.*dtype float32.*TensorSpec\(shape=\(None,\), dtype=mk.int32"):
        next_collatz(mk.constant([1.0]))
    with pytest.raises(TypeError, match=r"next_collatz.*shape \(2, 2\)"):
        next_collatz(mk.constant([[1, 2], [3, 4]]))
    with pytest.raises(TypeError, match=r"next_collatz.*1 argument.*received 2"):
        next_collatz(mk.constant([1]), mk.constant([2]))


def test_input_signature_by_keyword_and_nested():
    @mk.function(input_signature=[(mk.TensorSpec([2]), mk.TensorSpec([]))])
    def affine(pair):
        w, b = pair
        return w * 2.0 + b

    np.testing.assert_allclose(affine(pair=([1.0, 2.0], 1.0)).numpy(), [3.0, 5.0])


def test_input_signature_must_hold_tensor_specs():
    with pytest.raises(TypeError, match="input_signature must contain only mk.TensorSpec"):
        mk.function(lambda x: x, input_signature=[(2, 3)])


def test_get_concrete_function_traces_once_and_runs_that_signature():
    traced = []

    @mk.function
    def double(x):
        traced.append(1)
        return {"y": x * 2.0, "label": "twice"}

    concrete = double.get_concrete_function(mk.TensorSpec([3], mk.float32))
    assert concrete.structured_input_signature == ((mk.TensorSpec([3], mk.float32),), {})
    assert concrete.structured_outputs == {"y": mk.TensorSpec([3], mk.float32), "label": "twice"}
    out = concrete(mk.constant([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(out["y"].numpy(), [2.0, 4.0, 6.0])
    double(mk.constant([0.0, 0.0, 0.0]))  # the same signature: no new trace
    assert len(traced) == 1 and double.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="ConcreteFunction double takes"):
        concrete(mk.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="needs a known rank"):
        double.get_concrete_function(mk.TensorSpec(None, mk.float32))


def test_tensor_spec():
    spec = mk.TensorSpec([None, 3], mk.float32)
    assert repr(spec) == "TensorSpec(shape=(None, 3), dtype=mk.float32, name=None)"
    assert spec.is_compatible_with(mk.zeros((5, 3)))
    assert not spec.is_compatible_with(mk.zeros((5, 4)))
    assert not spec.is_compatible_with(mk.zeros((5, 3), dtype=mk.int32))
    assert mk.TensorSpec.from_tensor(mk.zeros((2,))) == mk.TensorSpec([2], "float32")
    assert len({spec, mk.TensorSpec((None, 3), "float32")}) == 1

"""mk.function traces a signature with None sizes once, as tf.function does: an input_signature
with None dimensions (and reduce_retracing, in test_function_retracing.py). The counts and
values marked "TF 2.21" came from running the same code with tf. in TensorFlow 2.21."""
import warnings

import numpy as np
import pytest

import minikeras as mk


def test_a_none_dimension_is_traced_once_for_every_size():
    seen = []

    @mk.function(input_signature=[mk.TensorSpec([None, 3], mk.float32)])
    def f(x):
        seen.append((x.shape, x.shape[0] is None, x.size))
        return mk.reduce_sum(x, axis=1) * mk.cast(mk.shape(x)[0], mk.float32)

    for n in (2, 5, 7):
        np.testing.assert_allclose(f(mk.ones((n, 3))).numpy(), np.full(n, 3.0 * n))
    # TF 2.21: the body ran once, x.shape was (None, 3) (x.shape.num_elements() None), tracing count 1
    assert seen == [((None, 3), True, None)]
    assert f.experimental_get_tracing_count() == 1
    assert f.program_count == 1 and f.programs()[0].general


def test_get_concrete_function_of_a_signature_with_none_dimensions():
    @mk.function(input_signature=[mk.TensorSpec([None, 3], mk.float32)])
    def f(x):
        return mk.reduce_sum(x, axis=1) * mk.cast(mk.shape(x)[0], mk.float32)

    concrete = f.get_concrete_function()
    # TF 2.21: input (None, 3), output TensorSpec(shape=(None,)), f(ones((4, 3))) = [12. 12. 12. 12.]
    assert concrete.structured_input_signature == ((mk.TensorSpec([None, 3], mk.float32),), {})
    assert concrete.structured_outputs == mk.TensorSpec([None], mk.float32)
    np.testing.assert_allclose(concrete(mk.ones((4, 3))).numpy(), [12.0] * 4)
    np.testing.assert_allclose(f(mk.ones((2, 3))).numpy(), [6.0, 6.0])
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(ValueError, match="symbolic sizes .* at least 1"):
        concrete(mk.ones((0, 3)))

    @mk.function
    def g(x):
        return x * 2.0

    same = g.get_concrete_function(mk.TensorSpec([None], mk.float32))
    np.testing.assert_allclose(same(mk.constant([1.0, 2.0, 3.0])).numpy(), [2.0, 4.0, 6.0])
    assert g.get_concrete_function(mk.TensorSpec([None], mk.float32)).jaxpr is same.jaxpr


def test_shapes_built_from_mk_shape_inside_the_trace():
    @mk.function(input_signature=[mk.TensorSpec([None, None], mk.float32)])
    def g(x):
        return mk.reshape(x, [-1]), mk.zeros([mk.shape(x)[0], 2]), x[:, 0], mk.reshape(x, [mk.shape(x)[0], -1, 1])

    # TF 2.21: shapes [6], [2, 2], [2] then [4], [4, 2], [4]; traced once
    assert [t.shape for t in g(mk.ones((2, 3)))] == [(6,), (2, 2), (2,), (2, 3, 1)]
    assert [t.shape for t in g(mk.ones((4, 1)))] == [(4,), (4, 2), (4,), (4, 1, 1)]
    assert g.experimental_get_tracing_count() == 1


def test_variables_assigned_and_created_in_a_general_trace():
    v = mk.Variable(0.0)

    @mk.function(input_signature=[mk.TensorSpec([None], mk.float32)])
    def acc(x):
        v.assign_add(mk.reduce_sum(x))
        return v.read_value()

    # TF 2.21: [1.0, 3.0, 6.0], tracing count 1
    assert [float(acc(mk.ones((n,)))) for n in (1, 2, 3)] == [1.0, 3.0, 6.0]
    assert acc.experimental_get_tracing_count() == 1

    class Scale(mk.Module):
        def __init__(self):
            super().__init__()
            self.w = None
            self.traces = 0

        @mk.function(input_signature=[mk.TensorSpec([None, 2], mk.float32)])
        def __call__(self, x):
            self.traces += 1
            if self.w is None:
                self.w = mk.Variable(mk.ones([2, 3]))
            return mk.matmul(x, self.w)

    s = Scale()
    # TF 2.21: shapes (1, 3), (4, 3), (6, 3); the body ran twice (the creating trace, then one
    # that reads the Variable)
    assert [s(mk.ones((n, 2))).shape for n in (1, 4, 6)] == [(1, 3), (4, 3), (6, 3)]
    assert s.traces == 2


def test_a_training_step_with_a_none_batch_is_traced_once_and_matches_eager_steps():
    def make():
        mk.random.set_seed(3)
        model = mk.Sequential([mk.layers.Dense(4, activation="relu"), mk.layers.Dense(1)])
        model(mk.zeros((1, 3)))
        return model, mk.optimizers.Adam(0.05)

    def step_of(model, optimizer):
        def step(x, y):
            with mk.GradientTape() as tape:
                loss = mk.reduce_mean(mk.square(model(x) - y))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return loss
        return step

    rng = np.random.default_rng(0)
    batches = [(rng.normal(size=(n, 3)).astype(np.float32), rng.normal(size=(n, 1)).astype(np.float32))
               for n in (4, 7, 2, 7)]
    eager = step_of(*make())
    compiled = mk.function(step_of(*make()), input_signature=[mk.TensorSpec([None, 3]), mk.TensorSpec([None, 1])])
    for x, y in batches:
        np.testing.assert_allclose(float(compiled(x, y)), float(eager(mk.constant(x), mk.constant(y))), rtol=1e-5)
    assert compiled.experimental_get_tracing_count() == 2  # the slots' creation retraces once, as in TF 2.21


def test_none_sizes_equal_in_the_traced_call_share_a_symbol():
    @mk.function(input_signature=[mk.TensorSpec([None, 3], mk.float32), mk.TensorSpec([None], mk.int32)])
    def two(x, y):
        return mk.reduce_sum(x, 1) + mk.cast(y, mk.float32)

    # TF 2.21: [4. 5.], tracing count 1; x and y of different batch sizes raise
    np.testing.assert_allclose(two(mk.ones((2, 3)), mk.constant([1, 2])).numpy(), [4.0, 5.0])
    np.testing.assert_allclose(two(mk.ones((4, 3)), mk.constant([1, 2, 3, 4])).numpy(), [4.0, 5.0, 6.0, 7.0])
    assert two.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="incompatible shapes"):
        two(mk.ones((2, 3)), mk.constant([1, 2, 3]))


def test_a_body_that_needs_concrete_sizes_is_traced_per_shape_with_a_warning():
    seen = []

    @mk.function(input_signature=[mk.TensorSpec([None, 3], mk.float32)])
    def halves(x):
        seen.append(x.shape)
        a, b = mk.split(x, 2, axis=0)  # XLA needs the size of the split axis to cut it
        return a - b

    with pytest.warns(UserWarning, match=r"mk.function\(halves\) could not be traced once for "
                                         r"\[TensorSpec\(shape=\(None, 3\).* in split .*called from halves"):
        out = halves(mk.reshape(mk.range(12.0), (4, 3)))
    # TF 2.21: [[-6. -6. -6.] [-6. -6. -6.]] and [[0. 0. 0.]], traced once (TensorFlow splits at
    # run time); here the body runs once per concrete shape after the failed general trace
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), -6.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the general trace is not tried again
        np.testing.assert_allclose(halves(mk.ones((2, 3))).numpy(), np.zeros((1, 3)))
    assert seen == [(None, 3), (4, 3), (2, 3)]
    assert halves.experimental_get_tracing_count() == 2


def test_a_size_zero_under_a_none_dimension_is_traced_for_its_shape():
    seen = []

    @mk.function(input_signature=[mk.TensorSpec([None, 3], mk.float32)])
    def f(x):
        seen.append(x.shape)
        return mk.reduce_sum(x, axis=1)

    # TF 2.21 traces once for sizes 2, 0 and 5; a symbolic size is at least 1, so the empty
    # batch gets a trace of its own here
    assert [f(mk.ones((n, 3))).shape for n in (2, 0, 5)] == [(2,), (0,), (5,)]
    assert seen == [(None, 3), (0, 3)]


def test_python_values_and_none_sizes_together():
    seen = []

    @mk.function(input_signature=[mk.TensorSpec([None], mk.float32), mk.TensorSpec([], mk.float32)])
    def scale(x, s):
        seen.append(1)
        return x * s

    np.testing.assert_allclose(scale([1.0, 2.0], 3.0).numpy(), [3.0, 6.0])
    np.testing.assert_allclose(scale([1.0, 2.0, 3.0], 2).numpy(), [2.0, 4.0, 6.0])
    assert len(seen) == 1


def test_a_none_batch_step_with_dropout_and_adam_is_traced_once():
    """Dropout draws a key and Adam updates on minikeras' own kernels (custom calls) where they
    are built: the symbolic-size program still exports and is traced once (plus the slots' retrace)."""
    mk.random.set_seed(5)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(4, activation="relu"), mk.layers.Dropout(0.5),
                           mk.layers.Dense(1)])
    optimizer = mk.optimizers.Adam(0.05)

    @mk.function(input_signature=[mk.TensorSpec([None, 3]), mk.TensorSpec([None, 1])])
    def step(x, y):
        with mk.GradientTape() as tape:
            loss = mk.reduce_mean(mk.square(model(x, training=True) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "could not be traced once" would be a warning
        losses = [float(step(np.ones((n, 3), np.float32), np.ones((n, 1), np.float32))) for n in (4, 7, 2)]
    assert all(np.isfinite(losses))
    assert step.experimental_get_tracing_count() == 2

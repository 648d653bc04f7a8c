"""mk.function against tf.function's documented behaviour: same results as eager, Variables
lifted and written back, lazy creation on the first call only, retracing rules, a tape
inside, randomness, Python control flow on traced values, methods and return values."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def model(x, w, b):
    return mk.tanh(mk.matmul(x, w) + b)


X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
W = np.linspace(0.5, -0.5, 6, dtype=np.float32).reshape(3, 2)


def test_results_equal_eager():
    w, b = mk.Variable(W), mk.Variable(np.zeros(2, np.float32))
    compiled = mk.function(model)
    out = compiled(mk.constant(X), w, b)
    assert isinstance(out, mk.Tensor) and out.shape == (4, 2)
    close(out, model(mk.constant(X), w, b))
    close(out, np.tanh(X @ W))


def test_variable_writes_persist_between_calls():
    v = mk.Variable(1.0)

    @mk.function
    def step(x):
        v.assign_add(x)
        return v * 2.0

    assert float(step(mk.constant(2.0))) == 6.0
    assert float(v) == 3.0
    assert float(step(mk.constant(2.0))) == 10.0
    assert float(v) == 5.0
    assert step.tracing_count == 1


def test_read_after_write_inside_sees_the_new_value():
    v = mk.Variable(1.0)

    @mk.function
    def step():
        before = v.read_value()
        v.assign(10.0)
        return before, v.read_value()

    before, after = step()
    assert float(before) == 1.0 and float(after) == 10.0


def test_variables_changed_outside_are_seen_inside():
    v = mk.Variable(1.0)
    read = mk.function(lambda: v * 1.0)
    assert float(read()) == 1.0
    v.assign(7.0)
    assert float(read()) == 7.0


class Dense:
    """A layer that builds its weights lazily, on its first call."""

    def __init__(self, units):
        self.units = units
        self.w = None

    @mk.function
    def __call__(self, x):
        if self.w is None:
            self.w = mk.Variable(mk.ones((x.shape[-1], self.units)) * 0.5, name="w")
        return mk.matmul(x, self.w)


def test_variables_created_on_the_first_call():
    layer = Dense(2)
    out = layer(mk.constant(X))
    assert isinstance(layer.w, mk.Variable) and layer.w.shape == (3, 2)
    close(layer.w.numpy(), np.full((3, 2), 0.5))  # a concrete value, not a tracer
    close(out, X @ np.full((3, 2), 0.5))
    layer.w.assign(np.ones((3, 2), np.float32))
    close(layer(mk.constant(X)), X @ np.ones((3, 2)))
    assert layer.__call__.tracing_count == 2  # TF 2.21 counts 2: the trace that created w, and the one after


def test_each_instance_of_a_decorated_method_has_its_own_function():
    first, second = Dense(2), Dense(3)
    assert first(mk.constant(X)).shape == (4, 2)
    assert second(mk.constant(X)).shape == (4, 3)
    # each created its weights on its first call: traced twice, as TF 2.21 counts
    assert first.__call__.tracing_count == 2 and second.__call__.tracing_count == 2
    assert first.w is not second.w


def test_creating_a_variable_on_every_call_is_an_error():
    @mk.function
    def leaky(x):
        w = mk.Variable(1.0)
        return x * w

    with pytest.raises(ValueError, match=r"mk.function\(leaky\).*Variable.*first call"):
        leaky(mk.constant(1.0))


def test_creating_a_variable_on_a_later_trace_is_an_error():
    made = []

    @mk.function
    def grows(x):
        if x.shape == (2,):
            made.append(mk.Variable(1.0, name="late"))
        return x * 2.0

    grows(mk.constant(1.0))
    with pytest.raises(ValueError, match="'late'.*first call"):
        grows(mk.constant([1.0, 2.0]))


def test_variable_from_a_traced_value_is_an_error():
    @mk.function
    def bad(x):
        return mk.Variable(x * 2.0)

    with pytest.raises(ValueError, match="traced value"):
        bad(mk.constant(1.0))


def test_retraces_only_on_new_shapes_dtypes_and_python_values():
    @mk.function
    def scale(x, factor):
        return x * factor

    scale(mk.constant([1.0, 2.0]), 2)
    scale(mk.constant([3.0, 4.0]), 2)                 # new values: no retrace
    scale(np.array([5.0, 6.0], np.float32), 2)        # same shape/dtype from NumPy: no retrace
    assert scale.tracing_count == 1
    scale(mk.constant([1.0, 2.0]), 3)                 # new Python value
    assert scale.tracing_count == 2
    scale(mk.constant([1.0, 2.0, 3.0]), 3)            # new shape
    assert scale.tracing_count == 3
    out = scale(mk.constant([1, 2, 3]), 3)            # new dtype
    assert scale.tracing_count == 4 and out.dtype == mk.int32
    close(scale(mk.constant([1.0, 2.0]), 2), [2.0, 4.0])
    assert scale.tracing_count == 4
    assert scale.experimental_get_tracing_count() == 4


def test_alternating_tensor_shapes_reuse_their_programs():
    double = mk.function(lambda x: x + x)
    short, long = mk.constant([1.0, 2.0]), mk.constant([1.0, 2.0, 3.0])
    for x in (short, short, long, short, long, mk.constant([1, 2]), long):
        out = double(x)
        assert out.dtype == x.dtype
        np.testing.assert_array_equal(out.numpy(), x.numpy() * 2)
    assert double.tracing_count == 3


def test_python_scalar_arguments_are_constants_of_the_trace():
    @mk.function
    def power(x, n):
        out = x
        for _ in range(n - 1):  # a Python loop over a Python int is unrolled
            out = out * x
        return out

    assert float(power(mk.constant(2.0), 3)) == 8.0
    assert float(power(mk.constant(2.0), 5)) == 32.0


def test_gradient_tape_inside_one_program():
    w = mk.Variable(W)

    @mk.function
    def train_step(x, y):
        with mk.GradientTape() as tape:
            loss = mk.reduce_mean((mk.matmul(x, w) - y) ** 2)
        grad = tape.gradient(loss, w)
        w.assign_sub(0.1 * grad)
        return loss

    y = np.ones((4, 2), np.float32)
    w_ref = jnp.asarray(W)
    loss_fn = lambda w: jnp.mean((X @ w - y) ** 2)  # noqa: E731
    for _ in range(3):
        loss = train_step(mk.constant(X), mk.constant(y))
        close(loss, jax.jit(loss_fn)(w_ref))
        w_ref = w_ref - 0.1 * jax.jit(jax.grad(loss_fn))(w_ref)
        close(w.numpy(), w_ref)
    assert train_step.tracing_count == 1


def test_nested_tapes_inside_a_function():
    @mk.function
    def second_derivative(x):
        with mk.GradientTape() as outer:
            outer.watch(x)
            with mk.GradientTape() as inner:
                inner.watch(x)
                y = mk.sin(x) * x
            dy = inner.gradient(y, x)
        return outer.gradient(dy, x)

    f = lambda x: jnp.sin(x) * x  # noqa: E731
    close(second_derivative(mk.constant(0.7)), jax.jit(jax.grad(jax.grad(f)))(0.7))


def test_random_ops_draw_fresh_numbers_each_call_and_repeat_after_set_seed():
    @mk.function
    def draw():
        return mk.random.normal((3,)), mk.random.uniform((2,), minval=1.0, maxval=2.0)

    mk.random.set_seed(7)
    first, second = draw(), draw()
    assert not np.allclose(first[0].numpy(), second[0].numpy())
    assert not np.allclose(first[1].numpy(), second[1].numpy())
    assert np.all((first[1].numpy() >= 1.0) & (first[1].numpy() < 2.0))
    mk.random.set_seed(7)
    again = draw(), draw()
    close(again[0][0], first[0].numpy())
    close(again[1][0], second[0].numpy())
    close(again[1][1], second[1].numpy())
    assert draw.tracing_count == 1


def test_python_if_on_a_traced_tensor_names_cond():
    @mk.function(autograph=False)  # with autograph (the default) the `if` becomes an mk.cond
    def branch(x):
        if x > 0.0:
            return x
        return -x

    with pytest.raises(TypeError, match=r"mk\.cond") as info:
        branch(mk.constant(1.0))
    assert not any("JAX" in note for note in getattr(info.value, "__notes__", []))  # no note about jax frames


def test_python_if_on_a_shape_is_fine():
    @mk.function
    def branch(x):
        if x.shape[0] > 2:
            return x * 2.0
        return x

    close(branch(mk.constant([1.0, 2.0, 3.0])), [2.0, 4.0, 6.0])


def test_numpy_of_a_traced_tensor_is_an_error():
    @mk.function
    def peek(x):
        return x.numpy()

    with pytest.raises(TypeError, match="traced"):
        peek(mk.constant(1.0))


def test_jit_compile_false_runs_eagerly():
    seen = []

    @mk.function(jit_compile=False)
    def eager(x):
        seen.append(isinstance(x._value, jax.core.Tracer))
        return x + 1.0

    assert float(eager(mk.constant(1.0))) == 2.0
    eager(mk.constant(1.0))
    assert seen == [False, False]


def test_run_functions_eagerly():
    seen = []

    @mk.function
    def f(x):
        seen.append(float(x))  # only possible eagerly
        return x

    mk.config.run_functions_eagerly(True)
    try:
        assert mk.config.functions_run_eagerly() is True
        f(mk.constant(3.0))
    finally:
        mk.config.run_functions_eagerly(False)
    assert seen == [3.0]
    assert mk.config.functions_run_eagerly() is False


def test_method_decorated_with_function():
    class Counter:
        def __init__(self):
            self.count = mk.Variable(0)

        @mk.function
        def increment(self, by):
            self.count.assign_add(by)
            return self.count.read_value()

    c = Counter()
    assert int(c.increment(mk.constant(2))) == 2
    assert int(c.increment(mk.constant(3))) == 5
    assert int(c.count) == 5
    assert c.increment.tracing_count == 1
    assert Counter.increment.__name__ == "increment"


def test_returning_nests_none_and_python_values():
    @mk.function
    def nest(x):
        return {"double": x * 2.0, "items": [x, None, 3, "label"]}, None

    out, nothing = nest(mk.constant(1.5))
    assert nothing is None
    assert float(out["double"]) == 3.0
    assert isinstance(out["items"][0], mk.Tensor) and float(out["items"][0]) == 1.5
    assert out["items"][1:] == [None, 3, "label"]


def test_returning_nothing():
    v = mk.Variable(0.0)

    @mk.function
    def store(x):
        v.assign(x)

    assert store(mk.constant(4.0)) is None
    assert float(v) == 4.0


def test_returning_a_variable_gives_its_value():
    v = mk.Variable(2.0)
    out = mk.function(lambda: v)()
    assert isinstance(out, mk.Tensor) and float(out) == 2.0


def test_keyword_and_nested_arguments():
    @mk.function
    def combine(pair, scale=1.0):
        a, b = pair
        return (a + b) * scale

    assert float(combine((mk.constant(1.0), mk.constant(2.0)), scale=2.0)) == 6.0
    assert float(combine([mk.constant(1.0), mk.constant(2.0)])) == 3.0


def test_function_under_a_recording_tape_is_differentiable():
    f = mk.function(lambda x: mk.sin(x) * x)
    x = mk.constant(0.5)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    close(tape.gradient(y, x), np.cos(0.5) * 0.5 + np.sin(0.5))


def test_function_called_inside_another_function():
    inner = mk.function(lambda x: x * 3.0)
    outer = mk.function(lambda x: inner(x) + 1.0)
    assert float(outer(mk.constant(2.0))) == 7.0

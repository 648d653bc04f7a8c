"""Python control flow on Tensors inside mk.function, converted by autograph, against
TensorFlow's AutoGraph on the tf.function guide's own examples (outputs of TF 2.21 quoted),
and gradients through converted code against jax.grad of the same lax program."""
import linecache

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import minikeras as mk


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


# -- the tf.function guide's loops ----------------------------------------------------------
@mk.function
def tanh_loop(x):
    while mk.reduce_sum(x) > 1:
        x = mk.tanh(x)
    return x


def test_while_on_a_tensor_condition_from_the_guide():
    close(tanh_loop(mk.constant([1.0, 2.0, 3.0])), [0.31778264, 0.3279555, 0.32901827])  # TF 2.21's output
    close(tanh_loop(mk.constant([0.1, 0.2, 0.3])), [0.1, 0.2, 0.3])
    assert tanh_loop.tracing_count == 1 and "while[" in str(tanh_loop.programs()[0].jaxpr)


@mk.function
def fizzbuzz_counts(n):
    counts = mk.zeros((4,), mk.int32)
    for i in mk.range(1, n + 1):
        if i % 15 == 0:
            counts += mk.constant([1, 0, 0, 0])
        elif i % 3 == 0:
            counts += mk.constant([0, 1, 0, 0])
        elif i % 5 == 0:
            counts += mk.constant([0, 0, 1, 0])
        else:
            counts += mk.constant([0, 0, 0, 1])
    return counts


def test_fizzbuzz_over_a_traced_range():
    # the guide's fizzbuzz prints; here each kind of line is counted: FizzBuzz, Fizz, Buzz, number
    close(fizzbuzz_counts(mk.constant(15)), [1, 4, 2, 8])
    close(fizzbuzz_counts(mk.constant(100)), [6, 27, 14, 53])
    assert fizzbuzz_counts.tracing_count == 1


def rnn_step(inp, state):
    return inp + state


@mk.function
def dynamic_rnn(rnn_step, input_data, initial_state):
    # [batch, time, features] -> [time, batch, features]
    input_data = mk.transpose(input_data, [1, 0, 2])
    max_seq_len = input_data.shape[0]
    states = mk.TensorArray(mk.float32, size=max_seq_len)
    state = initial_state
    for i in mk.range(max_seq_len):
        new_state = rnn_step(input_data[i], state)
        states = states.write(i, new_state)
    return mk.transpose(states.stack(), [1, 0, 2])


def test_dynamic_rnn_with_tensor_array_from_the_guide():
    data = np.random.RandomState(0).uniform(size=(2, 3, 4)).astype(np.float32)
    out = dynamic_rnn(rnn_step, mk.constant(data), mk.zeros([2, 4]))
    # the guide's loop never updates `state`, so each step is input + initial_state (TF 2.21 prints the same)
    close(out, data)

    @mk.function
    def accumulating_rnn(input_data, state):
        input_data = mk.transpose(input_data, [1, 0, 2])
        states = mk.TensorArray(mk.float32, size=input_data.shape[0])
        for i in mk.range(input_data.shape[0]):
            state = rnn_step(input_data[i], state)
            states = states.write(i, state)
        return mk.transpose(states.stack(), [1, 0, 2])

    close(accumulating_rnn(mk.constant(data), mk.zeros([2, 4])), np.cumsum(data, axis=1))


@mk.function
def sum_even(items):
    s = 0
    for c in items:
        if c % 2 > 0:
            continue
        s += c
    return s


def test_continue_in_a_loop_over_a_tensor():
    assert int(sum_even(mk.constant([10, 12, 15, 20]))) == 42  # the AutoGraph reference's example
    assert "while[" in str(sum_even.programs()[0].jaxpr)


@mk.function
def sum_until_big(x):
    s = 0.0
    for v in x:
        if v > 2.0:
            break
        s += v
    return s


@mk.function
def double_until(x):
    i = 0
    while i < 10:
        i += 1
        if mk.reduce_sum(x) > 100.0:
            break
        x = x * 2.0
    return x, i


def test_break_in_loops():
    assert float(sum_until_big(mk.constant([1.0, 2.0, 3.0, 1.0]))) == 3.0
    assert float(sum_until_big(mk.constant([1.0, 1.0]))) == 2.0
    x, i = double_until(mk.constant([1.0, 2.0]))
    close(x, [64.0, 128.0])
    assert int(i) == 7


@mk.function
def first_big(x):
    for v in x:
        if v > 2.0:
            return v
    return -1.0


@mk.function
def sign(x):
    if x > 0:
        return 1.0
    return -1.0


def test_return_inside_converted_control_flow():
    assert float(sign(mk.constant(3.0))) == 1.0 and float(sign(mk.constant(-3.0))) == -1.0
    assert float(first_big(mk.constant([1.0, 3.0, 5.0]))) == 3.0
    assert float(first_big(mk.constant([1.0, 0.0]))) == -1.0


def test_python_conditions_stay_python():
    trace_lines = []

    @mk.function
    def f(x, n):
        trace_lines.append(n)
        for _ in range(n):  # a Python range: unrolled while tracing
            x = x + 1.0
        if n > 2:            # a Python condition: decided while tracing
            x = x * 10.0
        return x

    assert float(f(mk.constant(0.0), 3)) == 30.0
    assert float(f(mk.constant(0.0), 3)) == 30.0
    assert float(f(mk.constant(0.0), 1)) == 1.0
    assert trace_lines == [3, 1]  # the body ran once per trace


def test_side_effects_in_a_converted_loop_happen_once_per_trace():
    seen = []

    @mk.function
    def f(x):
        while mk.reduce_sum(x) > 1:
            seen.append("body")
            x = x / 2.0
        return x

    f(mk.constant([8.0]))
    f(mk.constant([16.0]))
    assert seen == ["body"]


def test_variables_assigned_in_converted_branches_and_loops():
    v = mk.Variable(0.0, name="total")

    @mk.function
    def f(x):
        if x > 0.0:
            v.assign_add(x)
        else:
            v.assign_sub(1.0)
        for _ in mk.range(mk.cast(x, mk.int32)):
            v.assign_add(100.0)
        return v.read_value()

    assert float(f(mk.constant(2.0))) == 202.0
    assert float(f(mk.constant(-1.0))) == 201.0
    assert float(v) == 201.0


def test_a_method_with_control_flow():
    class Counter(mk.Module):
        def __init__(self):
            super().__init__()
            self.count = mk.Variable(0)

        @mk.function
        def __call__(self, x):
            while x > 0:
                self.count.assign_add(1)
                x -= 1
            return self.count.read_value()

    c = Counter()
    assert int(c(mk.constant(3))) == 3 and int(c(mk.constant(2))) == 5


# -- errors -----------------------------------------------------------------------------------
def test_variable_defined_in_one_branch_only():
    @mk.function
    def f(x):
        if x > 0:
            y = x
        return y

    with pytest.raises(ValueError, match="'y' must also be initialized in the else branch"):
        f(mk.constant(1.0))


def test_loop_variable_changing_dtype_is_an_error_naming_it():
    @mk.function
    def f(x):
        s = 0
        for c in x:
            s += c
        return s

    # TF 2.21: "TypeError: Input 'y' of 'AddV2' Op has type float32 that does not match type int32 of argument 'x'"
    with pytest.raises(TypeError, match="int32 tensor but is a float32 tensor"):
        f(mk.constant([1.0, 2.0]))

    @mk.function
    def g(x):
        s = 0
        for c in x:
            s = mk.cast(s, mk.float32) + c
        return s

    # TF 2.21: "TypeError: 's' has dtype int32 before the loop, but dtype float32 after one iteration"
    with pytest.raises(TypeError, match="'s' has dtype int32 before the loop, but dtype float32 after one iteration"):
        g(mk.constant([1.0, 2.0]))


def test_autograph_false_keeps_python_semantics():
    @mk.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="mk.cond"):
        f(mk.constant(1.0))


def test_unbounded_while_under_a_tape_says_to_add_maximum_iterations():
    @mk.function
    def f(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            while mk.reduce_sum(x) > 1.0:
                x = mk.tanh(x)
        return tape.gradient(x, x)

    with pytest.raises(ValueError, match="maximum_iterations"):
        f(mk.constant([2.0]))


# -- gradients ----------------------------------------------------------------------------------
def test_gradient_through_converted_for_and_if_matches_jax():
    w0 = np.array([[0.5, -0.3], [0.2, 0.4]], np.float32)
    w = mk.Variable(w0, name="w")

    @mk.function
    def loss_and_grad(xs, h):
        with mk.GradientTape() as tape:
            for x in xs:
                h = mk.tanh(mk.matmul(h, w) + x)
                if mk.reduce_sum(h) > 0.0:
                    h = h * 2.0
            loss = mk.reduce_sum(h * h)
        return loss, tape.gradient(loss, w)

    xs = np.random.RandomState(0).randn(4, 1, 2).astype(np.float32)
    h0 = np.ones((1, 2), np.float32)

    def reference(W):
        def step(h, x):
            h = jnp.tanh(h @ W + x)
            return lax.cond(jnp.sum(h) > 0, lambda: h * 2.0, lambda: h), None
        return jnp.sum(lax.scan(step, jnp.asarray(h0), jnp.asarray(xs))[0] ** 2)

    loss, g = loss_and_grad(mk.constant(xs), mk.constant(h0))
    close(loss, reference(jnp.asarray(w0)))
    close(g, jax.grad(reference)(jnp.asarray(w0)), rtol=1e-5)


def test_second_derivative_through_a_converted_if():
    @mk.function
    def second(x):
        with mk.GradientTape() as outer:
            outer.watch(x)
            with mk.GradientTape() as inner:
                inner.watch(x)
                if x > 0.0:
                    y = x * x * x
                else:
                    y = mk.sin(x)
            g = inner.gradient(y, x)
        return g, outer.gradient(g, x)

    def f(x):
        return lax.cond(x > 0.0, lambda: x ** 3, lambda: jnp.sin(x))

    for x in (2.0, -1.0):
        g, h = second(mk.constant(x))
        close(g, jax.grad(f)(x))
        close(h, jax.grad(jax.grad(f))(x))


def clipped_square(x):
    if x > 2.0:
        return x * 0.0 + 4.0
    return x * x


class Doubler:
    def apply(self, x):
        while mk.reduce_sum(x) < 10.0:
            x = x * 2.0
        return x


def test_functions_called_from_a_converted_function_are_converted_too():
    doubler = Doubler()

    @mk.function
    def f(x):
        return clipped_square(x), doubler.apply(mk.reshape(x, [1]))

    a, b = f(mk.constant(3.0))
    assert float(a) == 4.0 and float(b[0]) == 12.0
    a, b = f(mk.constant(1.5))
    assert float(a) == 2.25 and float(b[0]) == 12.0


def test_set_loop_options_bounds_a_while_statement_for_gradients():
    @mk.function
    def f(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = x
            while mk.reduce_sum(y) > 1.0:
                mk.autograph.experimental.set_loop_options(maximum_iterations=10)
                y = mk.tanh(y) * 1.5
        return y, tape.gradient(y, x)

    def reference(x):
        def cond(s):
            return (jnp.sum(s[1]) > 1.0) & (s[0] < 10)
        return lax.while_loop(cond, lambda s: (s[0] + 1, jnp.tanh(s[1]) * 1.5), (0, x))[1]

    y, g = f(mk.constant([2.0]))
    close(y, reference(jnp.array([2.0])))
    close(g, jax.jacfwd(reference)(jnp.array([2.0]))[0], rtol=1e-4)
    mk.autograph.experimental.set_loop_options(maximum_iterations=3)  # outside a loop: nothing


def test_a_loop_over_a_known_tensor_is_a_loop_in_the_program():
    seen = []

    @mk.function
    def f(x):
        for i in mk.range(1000):
            seen.append("body")
            x = x + mk.cast(i, mk.float32)
        return x

    assert float(f(mk.constant(0.0))) == 999 * 1000 / 2
    assert seen == ["body"]  # traced once, as the body of one while loop, not unrolled 1000 times
    assert "while[" in str(f.programs()[0].jaxpr)


def test_logical_operators_and_conditional_expressions_on_traced_tensors():
    @mk.function
    def f(x):
        i = 0
        while i < 10 and mk.reduce_sum(x) < 100.0:
            x = x * 2.0
            i += 1
        big = x if not mk.reduce_sum(x) < 150.0 or i > 100 else -x
        return big, i

    big, i = f(mk.constant([1.0, 2.0]))
    close(big, [64.0, 128.0])  # sums 3, 6, ..., 96, 192: six doublings, then 192 >= 150
    assert int(i) == 6
    big, i = f(mk.constant([30.0, 30.0]))
    close(big, [-60.0, -60.0])
    assert int(i) == 1


def test_a_custom_layers_call_is_converted_inside_mk_function():
    class SignFlip(mk.layers.Layer):
        def call(self, inputs):
            if mk.reduce_sum(inputs) > 0:
                return inputs * -1.0
            return inputs

    layer = SignFlip()
    step = mk.function(lambda x: layer(x))
    np.testing.assert_allclose(step(mk.constant([1.0, 2.0])).numpy(), [-1.0, -2.0])
    np.testing.assert_allclose(step(mk.constant([-1.0, -2.0])).numpy(), [-1.0, -2.0])
    np.testing.assert_allclose(layer(mk.constant([1.0, 2.0])).numpy(), [-1.0, -2.0])  # eagerly, as written


def test_source_registered_in_linecache_converts_like_a_notebook_cell():
    # IPython registers each cell's source in linecache under a name that is no file
    name = "<mk-test-cell-1>"
    source = "def f(x):\n    if x > 0:\n        return x * 2\n    return -x\n"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    try:
        namespace = {}
        exec(compile(source, name, "exec"), namespace)
        f = mk.function(namespace["f"])
        assert f(mk.constant(3.0)).numpy() == 6.0 and f(mk.constant(-2.0)).numpy() == 2.0
        assert f.experimental_get_tracing_count() == 1  # one trace: the `if` became mk.cond
    finally:
        linecache.cache.pop(name, None)

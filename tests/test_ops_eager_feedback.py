"""The eager ops a generator loop runs between compiled calls (``mk.reshape(mk.cast(next_id,
'int32'), (1, 1))``) take short paths: a Tensor reshaped to a tuple of ints, and a cast to the
dtype a Tensor already has. These tests pin that the short paths give what the general ones
give: values, errors, gradients, traced programs, and fallbacks for -1 and symbolic sizes."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_close, rand

import minikeras as mk

X = rand(2, 3, 4, seed=40)


@pytest.mark.parametrize("shape", [(6, 4), (24,), (1, 2, 12), (6, -1), [4, 6]])
def test_reshape_to_a_tuple_matches_numpy(shape):
    out = mk.reshape(mk.constant(X), shape)
    assert isinstance(out, mk.Tensor)
    assert_close(out, np.reshape(X, shape))


def test_reshape_of_one_drawn_id_keeps_its_dtype():
    ids = mk.constant(np.array([7], "int32"))
    out = mk.reshape(mk.cast(ids, "int32"), (1, 1))
    assert out.shape == (1, 1) and out.dtype == np.int32 and out.numpy().tolist() == [[7]]


@pytest.mark.parametrize("shape", [(5, 5), (0, 24), (-2, 12)])
def test_reshape_to_a_tuple_with_another_size_is_an_error(shape):
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"Cannot reshape a tensor with 24 elements"):
        mk.reshape(mk.constant(X), shape)


def test_reshape_to_a_tuple_records_its_gradient():
    x = mk.Variable(X)
    with mk.GradientTape() as tape:
        y = mk.reduce_sum(mk.sin(mk.reshape(x, (4, 6))) * np.arange(24, dtype="float32").reshape(4, 6))
    expected = jax.grad(lambda a: jnp.sum(jnp.sin(a.reshape(4, 6)) * jnp.arange(24.0).reshape(4, 6)))(X)
    assert_close(tape.gradient(y, x), expected)


def test_reshape_to_a_tuple_inside_a_function_with_none_sizes():
    @mk.function(input_signature=[mk.TensorSpec([None, 3, 4], "float32")])
    def flat(x):
        return mk.reshape(x, (mk.shape(x)[0], 12))

    assert_close(flat(mk.constant(X)), X.reshape(2, 12))
    assert_close(flat(mk.constant(rand(5, 3, 4, seed=41))), rand(5, 3, 4, seed=41).reshape(5, 12))
    assert flat.tracing_count == 1


def test_cast_to_the_same_dtype_is_the_tensor_itself():
    x = mk.constant(np.array([1, 2], "int32"))
    assert mk.cast(x, "int32") is x
    assert mk.cast(x, mk.int32) is x
    y = mk.constant(X)
    assert mk.cast(y, "float32") is y


def test_cast_to_another_dtype_named_by_string_still_converts():
    x = mk.constant(np.array([1, 2], "int32"))
    out = mk.cast(x, "float32")
    assert out.dtype == np.float32 and out.numpy().tolist() == [1.0, 2.0]
    y = mk.cast(mk.constant(np.array([1.7, -2.5], "float32")), "int32")
    assert y.dtype == np.int32 and y.numpy().tolist() == [1, -2]


def test_generator_loop_runs_one_program_without_retracing():
    """The example's loop: a compiled step, then the eager cast and reshape fed back."""
    generator = mk.random.get_global_generator()
    embedding = mk.Variable(rand(5, 3, seed=42))

    @mk.function
    def step(ids, state):
        state = mk.tanh(mk.gather(embedding, ids[:, -1]) + state)
        return mk.squeeze(mk.random.categorical(state, num_samples=1), axis=-1), state

    ids, state = mk.constant(np.array([[1]], "int32")), mk.zeros((1, 3))
    drawn = []
    for _ in range(4):
        next_id, state = step(ids, state)
        ids = mk.reshape(mk.cast(next_id, "int32"), (1, 1))
        drawn.append(int(next_id.numpy()[0]))
    assert step.tracing_count == 1 and step.program_count == 1
    (program,) = step.programs()
    assert program.assigned == [generator] and program.n_outputs == 2
    assert ids.shape == (1, 1) and all(0 <= d < 3 for d in drawn)


def test_results_of_the_compiled_call_keep_their_structure():
    """A flat tuple of Tensors is built without a pytree unflatten; other results as before."""
    x = mk.constant(np.array([1.0, 2.0], "float32"))
    pair = mk.function(lambda a: (a + 1.0, a * 2.0))
    one = mk.function(lambda a: (a + 1.0,))
    nested = mk.function(lambda a: (a, [a * 3.0, 4], {"s": a - 1.0}))
    for _ in range(2):  # the first call traces, the second takes the short call path
        out = pair(x)
        assert type(out) is tuple and len(out) == 2 and all(isinstance(t, mk.Tensor) for t in out)
        assert out[0].numpy().tolist() == [2.0, 3.0] and out[1].numpy().tolist() == [2.0, 4.0]
        (single,) = one(x)
        assert type(one(x)) is tuple and single.numpy().tolist() == [2.0, 3.0]
        a, (b, four), d = nested(x)
        assert four == 4 and b.numpy().tolist() == [3.0, 6.0] and d["s"].numpy().tolist() == [0.0, 1.0]
    assert pair.tracing_count == one.tracing_count == nested.tracing_count == 1

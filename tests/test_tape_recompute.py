"""mk.recompute_grad: the same gradients as jax.grad of the plain function, eagerly, inside
mk.function (where XLA rematerialises), for Variables, second and third order (against
jax.checkpoint + jax.grad), and Dropout."""
import gc

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 3)).astype(np.float32)
W1 = RNG.normal(size=(3, 5)).astype(np.float32)
W2 = RNG.normal(size=(5, 2)).astype(np.float32)


def block_jax(x, w1, w2):
    return jnp.tanh(jnp.tanh(x @ w1) @ w2)


def loss_jax(x, w1, w2):
    return jnp.sum(block_jax(x, w1, w2) ** 2)


@pytest.fixture
def weights():
    return mk.Variable(W1, name="w1"), mk.Variable(W2, name="w2")


def test_gradients_of_inputs_and_variables_match_jax_grad(weights):
    w1, w2 = weights
    block = mk.recompute_grad(lambda x: mk.tanh(mk.matmul(mk.tanh(mk.matmul(x, w1)), w2)))
    x = mk.constant(X)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = block(x)
        loss = mk.reduce_sum(y ** 2)
    gx, g1, g2 = tape.gradient(loss, [x, w1, w2])
    np.testing.assert_allclose(y.numpy(), block_jax(X, W1, W2), rtol=1e-6)
    for got, want in zip((gx, g1, g2), jax.grad(loss_jax, argnums=(0, 1, 2))(X, W1, W2)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_compiled_step_needs_less_memory_for_activations():
    """The compiled program's temporary buffers (XLA's memory analysis, deterministic): a
    stack of 8 two-Dense blocks at batch 256, with and without checkpointing each block."""
    rng = np.random.default_rng(1)
    kernels = [mk.Variable(rng.normal(size=(128, 128)).astype(np.float32) * 0.1) for _ in range(8)]
    x = mk.constant(rng.normal(size=(256, 128)).astype(np.float32))

    def block(kernel):  # relu: jax's own gradient of max makes arrays of ones and twos
        return lambda h: mk.tanh(mk.matmul(mk.nn.relu(mk.matmul(h, kernel)), kernel))

    def temp_bytes(wrap):
        blocks = [wrap(block(k)) for k in kernels]

        @mk.function
        def step(x):
            with mk.GradientTape() as tape:
                h = x
                for b in blocks:
                    h = b(h)
                loss = mk.reduce_sum(h)
            return tape.gradient(loss, kernels)

        grads = step(x)
        (program,) = step.programs()
        compiled = jax.jit(program.pure).lower(program.state(), [x.numpy()]).compile()
        constants = sum(np.asarray(c).nbytes for c in program.jaxpr.consts)
        return compiled.memory_analysis().temp_size_in_bytes, constants, grads

    plain, plain_constants, want = temp_bytes(lambda f: f)
    checkpointed, checkpointed_constants, got = temp_bytes(mk.recompute_grad)
    # No activation-sized constants baked into the program (they stay resident for its
    # lifetime): not per block, and not the loss's seed broadcast to the batch, which the tape's
    # backward pass, run rule by rule past recompute_grad's op, stages rather than computes.
    assert checkpointed_constants <= plain_constants, (checkpointed_constants, plain_constants)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-4)  # float32 sums of 256 rows
    assert checkpointed < 0.6 * plain, (checkpointed, plain)  # one saved activation per block instead of two


def test_without_a_tape_it_is_the_plain_function(weights):
    w1, _ = weights
    out = mk.recompute_grad(lambda x: mk.matmul(x, w1))(X)
    np.testing.assert_allclose(out.numpy(), X @ W1, rtol=1e-6)


def test_inside_mk_function_matches_jax_grad(weights):
    w1, w2 = weights
    block = mk.recompute_grad(lambda x: mk.tanh(mk.matmul(mk.tanh(mk.matmul(x, w1)), w2)))

    @mk.function
    def step(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            loss = mk.reduce_sum(block(x) ** 2)
        return tape.gradient(loss, [x, w1, w2])

    for scale in (1.0, 0.5):  # the traced program, called again after w1 changed
        w1.assign(W1 * scale)
        want = jax.grad(loss_jax, argnums=(0, 1, 2))(X, W1 * scale, W2)
        for got, ref in zip(step(mk.constant(X)), want):
            np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-6)
    assert len(step.programs()) == 1


def test_second_order_through_nested_tapes():
    x = mk.constant(np.array([0.3, -1.2, 0.7], np.float32))
    f = mk.recompute_grad(lambda x: mk.reduce_sum(mk.sin(x) * x ** 2))
    with mk.GradientTape() as outer:
        outer.watch(x)
        with mk.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    h = outer.jacobian(g, x)
    want = jax.hessian(lambda v: jnp.sum(jnp.sin(v) * v ** 2))(np.asarray(x))
    np.testing.assert_allclose(g.numpy(), jax.grad(lambda v: jnp.sum(jnp.sin(v) * v ** 2))(np.asarray(x)),
                               rtol=1e-5)
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-5, atol=1e-6)


def test_dropout_inside_draws_the_same_mask_when_recomputed():
    mk.random.set_seed(7)
    dense = mk.layers.Dense(64, kernel_initializer="ones", use_bias=False)
    dropout = mk.layers.Dropout(0.5)
    block = mk.recompute_grad(lambda x: dropout(dense(x), training=True))
    x = mk.constant(np.ones((2, 3), np.float32))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = block(x)
        loss = mk.reduce_sum(y)
    gx, gk = tape.gradient(loss, [x, dense.kernel])
    kept = (y.numpy() != 0).astype(np.float32)  # the mask the forward pass drew
    assert 0 < kept.mean() < 1
    # y = (x @ K) * mask / 0.5, so dL/dK = x^T (mask / 0.5) and dL/dx = (mask / 0.5) K^T
    np.testing.assert_allclose(gk.numpy(), np.ones((2, 3)).T @ (kept / 0.5), rtol=1e-6)
    np.testing.assert_allclose(gx.numpy(), (kept / 0.5) @ np.ones((64, 3)), rtol=1e-6)


def test_dropout_inside_mk_function_draws_the_same_mask():
    mk.random.set_seed(3)
    dropout = mk.layers.Dropout(0.5)
    block = mk.recompute_grad(lambda x: dropout(x * 2.0, training=True))

    @mk.function
    def step(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = block(x)
        return y, tape.gradient(y, x)

    x = mk.constant(np.ones((4, 32), np.float32))
    y1, g1 = step(x)
    np.testing.assert_allclose(g1.numpy(), (y1.numpy() != 0) * 4.0)  # 2 / (1 - 0.5) where kept
    y2, _ = step(x)
    assert not np.array_equal(y1.numpy(), y2.numpy())  # the generator still advances per call


def test_random_generator_ends_where_the_forward_pass_left_it():
    mk.random.set_seed(11)
    block = mk.recompute_grad(lambda x: x * mk.random.uniform((3,)))
    x = mk.constant(np.ones(3, np.float32))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = block(x)
    after_forward = mk.random.uniform((3,)).numpy()
    mk.random.set_seed(11)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = block(x)
    g = tape.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), y.numpy())  # d(x*u)/dx = u = y at x = 1
    np.testing.assert_allclose(mk.random.uniform((3,)).numpy(), after_forward)


def test_layers_in_a_sequential_model_get_their_gradients():
    mk.random.set_seed(0)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(8, activation="relu"), mk.layers.Dense(1)])
    checkpointed = mk.recompute_grad(model)
    x = mk.constant(X)
    with mk.GradientTape() as tape:
        plain = mk.reduce_sum(model(x) ** 2)
    want = tape.gradient(plain, model.trainable_variables)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(checkpointed(x) ** 2)
    got = tape.gradient(loss, model.trainable_variables)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_rejects_a_non_callable():
    with pytest.raises(TypeError, match="mk.recompute_grad expects a callable, received int"):
        mk.recompute_grad(3)


def test_eagerly_the_tape_holds_only_inputs_and_outputs():
    """Bytes of live jax arrays after the forward pass of 8 blocks, with and without."""
    rng = np.random.default_rng(2)
    kernels = [mk.Variable(rng.normal(size=(128, 128)).astype(np.float32) * 0.1) for _ in range(8)]
    x = mk.constant(rng.normal(size=(256, 128)).astype(np.float32))

    def block(kernel):
        return lambda h: mk.tanh(mk.matmul(mk.tanh(mk.matmul(h, kernel)), kernel))

    def held_bytes(wrap):
        blocks = [wrap(block(k)) for k in kernels]
        gc.collect()
        before = sum(a.nbytes for a in jax.live_arrays())
        with mk.GradientTape() as tape:
            h = x
            for b in blocks:
                h = b(h)
            loss = mk.reduce_sum(h)
        gc.collect()
        held = sum(a.nbytes for a in jax.live_arrays()) - before
        return held, tape.gradient(loss, kernels)

    plain, want = held_bytes(lambda f: f)
    checkpointed, got = held_bytes(mk.recompute_grad)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-4)
    activation = 256 * 128 * 4
    assert checkpointed <= 8 * activation + 4096 < plain, (checkpointed, plain)  # one output per block


# -- higher order: nested tapes through checkpointed blocks that read a Variable -------------
WH = (RNG.normal(size=(3, 3)) * 0.5).astype(np.float32)


def _block_jax(h, w):
    return jnp.tanh(h @ w) * jnp.sin(h)


def _chain_jax(x, w):
    block = jax.checkpoint(_block_jax)
    return jnp.sum(block(block(x, w), w))


def _order_jax(order):
    """The scalar whose gradient is order ``order``: loss, then sum(grad_x ** 2) per order."""
    if order == 1:
        return _chain_jax
    lower = _order_jax(order - 1)
    return lambda x, w: jnp.sum(jax.grad(lower)(x, w) ** 2)


def _higher_order(block, w, x, order):
    """d/d(x, w) of the order-th scalar of ``_order_jax``, with one nested tape per order."""
    tapes = [mk.GradientTape(persistent=False) for _ in range(order)]
    for tape in tapes:  # outermost first
        tape.__enter__()
        tape.watch(x)
    value = mk.reduce_sum(block(block(x)))
    for tape in reversed(tapes[1:]):
        tape.__exit__(None, None, None)
        value = mk.reduce_sum(tape.gradient(value, x) ** 2)
    tapes[0].__exit__(None, None, None)
    return tapes[0].gradient(value, [x, w])


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "mk_function"])
def test_first_second_and_third_order_match_jax_checkpoint(compiled):
    w = mk.Variable(WH, name="w")
    block = mk.recompute_grad(lambda h: mk.tanh(mk.matmul(h, w)) * mk.sin(h))
    run = mk.function(_higher_order, autograph=False) if compiled else _higher_order
    for order in (1, 2, 3):
        gx, gw = run(block, w, mk.constant(X), order)
        want_x, want_w = jax.grad(_order_jax(order), argnums=(0, 1))(X, WH)
        np.testing.assert_allclose(gx.numpy(), want_x, rtol=1e-4, atol=1e-5, err_msg=f"order {order}")
        np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-4, atol=1e-5, err_msg=f"order {order}")


# -- segments: one recompute_grad around several blocks, each reading its own Variable --------
WS = [(RNG.normal(size=(3, 3)) * 0.5).astype(np.float32) for _ in range(3)]


def _segment_jax(h, *ws):
    for w in ws:
        h = jax.nn.relu(h @ w) + jnp.tanh(h)
    return h


def _segments_loss_jax(x, *ws):
    segment = jax.checkpoint(_segment_jax)
    return jnp.sum(segment(segment(x, *ws), *ws) ** 2)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "mk_function"])
def test_segment_of_several_blocks_matches_jax_checkpoint(compiled):
    ws = [mk.Variable(w, name=f"w{i}") for i, w in enumerate(WS)]

    def segment(h):
        for w in ws:
            h = mk.nn.relu(mk.matmul(h, w)) + mk.tanh(h)
        return h

    checkpointed = mk.recompute_grad(segment)

    def gradients(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            loss = mk.reduce_sum(checkpointed(checkpointed(x)) ** 2)
        return tape.gradient(loss, [x, *ws])

    run = mk.function(gradients) if compiled else gradients
    got = run(mk.constant(X))
    want = jax.grad(_segments_loss_jax, argnums=(0, 1, 2, 3))(X, *WS)
    for i, (g, ref) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g.numpy(), ref, rtol=1e-5, atol=1e-6, err_msg=f"gradient {i}")


def test_keras_remat_runs_keras_documented_example():
    """keras.remat is recompute_grad: Keras 3's documented custom layer trains, with the gradients
    of the same layer without it."""
    from minikeras import keras

    class CustomRematLayer(keras.layers.Layer):
        def __init__(self, use_remat=True, **kwargs):
            super().__init__(**kwargs)
            self.remat_function = keras.remat(self.intermediate_function) if use_remat else self.intermediate_function

        def intermediate_function(self, x):
            for _ in range(2):
                x = x + x * 0.1
            return x

        def call(self, inputs):
            return self.remat_function(inputs)

    grads = []
    for use_remat in (True, False):
        mk.utils.set_random_seed(0)
        inputs = keras.layers.Input(shape=(4,))
        x = keras.layers.Dense(4, activation="relu")(inputs)
        x = CustomRematLayer(use_remat)(x)
        model = keras.Model(inputs, keras.layers.Dense(1)(x))
        data = np.random.default_rng(0).random((8, 4), dtype="float32")
        with mk.GradientTape() as tape:
            loss = mk.reduce_sum(model(data) ** 2)
        grads.append([g.numpy() for g in tape.gradient(loss, model.trainable_variables)])
        model.compile(optimizer="adam", loss="mse")
        model.fit(data, np.ones((8, 1), "float32"), epochs=1, verbose=0)
    for with_remat, without in zip(*grads):
        np.testing.assert_allclose(with_remat, without, rtol=1e-6)

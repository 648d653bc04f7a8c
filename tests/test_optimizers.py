"""Optimizers: trajectories against Keras 3's written update formulas (NumPy) and against optax,
schedules, clipping, the None/dtype/shape checks, minimize, compiled steps and slot bookkeeping."""
import warnings

import numpy as np
import optax
import pytest
from conftest import assert_close
from optimizer_reference import (
    GRADS,
    INIT,
    RNG,
    STEPS,
    assert_same,
    count_eager_ops,
    numpy_adam,
    numpy_rmsprop,
    numpy_sgd,
    run_mk,
    run_numpy,
    run_optax,
)

import minikeras as mk
from minikeras import optimizers
from minikeras.optimizers import schedules


@pytest.mark.parametrize("kwargs", [{}, {"beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3}, {"amsgrad": True}],
                         ids=["default", "betas", "amsgrad"])
def test_adam_matches_keras_formula(kwargs):
    reference = numpy_adam(lr=0.01, b1=kwargs.get("beta_1", 0.9), b2=kwargs.get("beta_2", 0.999),
                           eps=kwargs.get("epsilon", 1e-7), amsgrad=kwargs.get("amsgrad", False))
    assert_same(run_mk(optimizers.Adam(learning_rate=0.01, **kwargs)), run_numpy(*reference))


def test_adam_matches_optax_with_epsilon_zero():
    # Keras's eps is added to sqrt(v) *before* bias correction, optax's after; with eps = 0 they agree.
    assert_same(run_mk(optimizers.Adam(learning_rate=0.01, epsilon=0.0)),
                run_optax(optax.adam(0.01, b1=0.9, b2=0.999, eps=0.0)), rtol=2e-5)


@pytest.mark.parametrize("momentum,nesterov", [(0.0, False), (0.9, False), (0.9, True)])
def test_sgd_matches_keras_formula_and_optax(momentum, nesterov):
    result = run_mk(optimizers.SGD(learning_rate=0.1, momentum=momentum, nesterov=nesterov))
    assert_same(result, run_numpy(*numpy_sgd(0.1, momentum, nesterov)))
    assert_same(result, run_optax(optax.sgd(0.1, momentum=momentum or None, nesterov=nesterov)))


@pytest.mark.parametrize("kwargs", [{}, {"centered": True}, {"momentum": 0.5}, {"centered": True, "momentum": 0.5}],
                         ids=["plain", "centered", "momentum", "centered_momentum"])
def test_rmsprop_matches_keras_formula_and_optax(kwargs):
    result = run_mk(optimizers.RMSprop(learning_rate=0.01, rho=0.8, epsilon=1e-6, **kwargs))
    assert_same(result, run_numpy(*numpy_rmsprop(0.01, 0.8, kwargs.get("momentum", 0.0), 1e-6,
                                                 kwargs.get("centered", False))))
    expected = run_optax(optax.rmsprop(0.01, decay=0.8, eps=1e-6, centered=kwargs.get("centered", False),
                                       momentum=kwargs.get("momentum")))
    assert_same(result, expected, rtol=2e-5)


def test_rmsprop_keras_doc_example():
    var = mk.Variable(10.0)
    optimizers.RMSprop(learning_rate=0.1).minimize(lambda: (var ** 2) / 2.0, [var])
    assert float(var.numpy()) == pytest.approx(9.683772, rel=1e-6)


# -- schedules ---------------------------------------------------------------------------------------
def test_schedule_values():
    steps = [0, 1, 5, 10, 15, 25]
    exp = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    stair = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True)
    inverse = schedules.InverseTimeDecay(0.1, decay_steps=10, decay_rate=0.5)
    piecewise = schedules.PiecewiseConstantDecay([5, 10], [1.0, 0.5, 0.1])
    cosine = schedules.CosineDecay(0.1, decay_steps=20, alpha=0.1)
    poly = schedules.PolynomialDecay(0.1, decay_steps=20, end_learning_rate=0.01, power=2.0)
    for s in steps:
        assert float(exp(s)) == pytest.approx(0.1 * 0.5 ** (s / 10), rel=1e-6)
        assert float(stair(s)) == pytest.approx(0.1 * 0.5 ** (s // 10), rel=1e-6)
        assert float(inverse(s)) == pytest.approx(0.1 / (1 + 0.5 * s / 10), rel=1e-6)
        assert float(piecewise(s)) == pytest.approx(1.0 if s <= 5 else 0.5 if s <= 10 else 0.1)
        decayed = (1 - 0.1) * 0.5 * (1 + np.cos(np.pi * min(s, 20) / 20)) + 0.1
        assert float(cosine(s)) == pytest.approx(0.1 * decayed, rel=1e-5, abs=1e-7)
        assert float(poly(s)) == pytest.approx(0.09 * (1 - min(s, 20) / 20) ** 2 + 0.01, rel=1e-5)
    warm = schedules.CosineDecay(0.0, decay_steps=10, warmup_target=0.2, warmup_steps=4)
    assert [round(float(warm(s)), 6) for s in (0, 2, 4)] == [0.0, 0.1, 0.2]
    assert float(warm(9)) == pytest.approx(0.2 * 0.5 * (1 + np.cos(np.pi * 5 / 10)), rel=1e-5)
    with pytest.raises(ValueError, match="decay_steps"):
        schedules.ExponentialDecay(0.1, decay_steps=0, decay_rate=0.5)
    with pytest.raises(ValueError, match="length of boundaries"):
        schedules.PiecewiseConstantDecay([1, 2], [1.0, 2.0])
    config = schedules.serialize(stair)
    assert schedules.deserialize(config).get_config() == stair.get_config()


def test_schedule_is_evaluated_at_iterations_without_retracing():
    lr = schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    optimizer = optimizers.SGD(learning_rate=lr)
    result = run_mk(optimizer)
    expected = [w.astype(np.float64) for w in INIT]
    for t in range(STEPS):
        expected = [w - 0.1 * 0.5 ** t * g for w, g in zip(expected, GRADS[t])]
    assert_same(result, expected)
    assert float(optimizer.learning_rate) == pytest.approx(0.1 * 0.5 ** STEPS)
    assert len(optimizer.variables) == 1  # iterations only: no learning-rate Variable
    with pytest.raises(TypeError, match="not settable"):
        optimizer.learning_rate = 0.5


def test_learning_rate_is_a_settable_variable_without_retracing():
    optimizer = optimizers.SGD(learning_rate=0.1)
    variables = [mk.Variable(w) for w in INIT]
    optimizer.apply_gradients(zip(GRADS[0], variables))
    before = [v.numpy() for v in variables]
    optimizer.learning_rate = 0.01
    assert float(optimizer.learning_rate.numpy()) == pytest.approx(0.01)
    optimizer.apply_gradients(zip(GRADS[1], variables))
    assert_same([v.numpy() for v in variables], [b - 0.01 * g for b, g in zip(before, GRADS[1])])
    assert optimizer.update_function(variables).tracing_count == 1
    calls = []
    optimizer.learning_rate = lambda: calls.append(1) or 0.001  # a Python callable runs every step
    optimizer.apply_gradients(zip(GRADS[2], variables))
    optimizer.apply_gradients(zip(GRADS[3], variables))
    assert len(calls) == 2


# -- clipping ----------------------------------------------------------------------------------------
def test_clipping():
    g1, g2 = np.array([3.0, 4.0], np.float32), np.array([0.0, 12.0], np.float32)  # norms 5 and 12; global 13

    def step(**kwargs):
        variables = [mk.Variable(np.zeros(2, np.float32)), mk.Variable(np.zeros(2, np.float32))]
        optimizers.SGD(learning_rate=1.0, **kwargs).apply_gradients(zip([g1, g2], variables))
        return [-v.numpy() for v in variables]

    assert_same(step(clipnorm=2.0), [g1 * 2 / 5, g2 * 2 / 12])
    assert_same(step(clipnorm=20.0), [g1, g2])
    assert_same(step(global_clipnorm=6.5), [g1 / 2, g2 / 2])
    assert_same(step(clipvalue=3.5), [np.clip(g1, -3.5, 3.5), np.clip(g2, -3.5, 3.5)])
    with pytest.raises(ValueError, match="Only one of"):
        optimizers.SGD(clipnorm=1.0, clipvalue=1.0)


def test_weight_decay():
    variables = [mk.Variable(w) for w in INIT]
    optimizers.SGD(learning_rate=0.1, weight_decay=0.5).apply_gradients(zip(GRADS[0], variables))
    assert_same([v.numpy() for v in variables], [w - w * 0.5 * 0.1 - 0.1 * g for w, g in zip(INIT, GRADS[0])])


# -- user errors -------------------------------------------------------------------------------------
def test_none_gradients_are_skipped_with_a_warning_naming_them():
    a, b = mk.Variable([1.0, 2.0], name="kernel"), mk.Variable([1.0], name="unused_bias")
    optimizer = optimizers.SGD(learning_rate=1.0)
    with pytest.warns(UserWarning, match="unused_bias"):
        optimizer.apply_gradients(zip([mk.constant([1.0, 1.0]), None], [a, b]))
    np.testing.assert_allclose(a.numpy(), [0.0, 1.0])
    np.testing.assert_allclose(b.numpy(), [1.0])
    with pytest.raises(ValueError, match="No gradients provided for any variable.*kernel"):
        optimizer.apply_gradients(zip([None, None], [a, b]))


def test_bad_gradients_and_variables_are_named():
    a = mk.Variable([1.0, 2.0], name="kernel")
    optimizer = optimizers.Adam()
    with pytest.raises(TypeError, match="'kernel'.*int32.*floating"):
        optimizer.apply_gradients([(mk.constant([1, 2]), a)])
    with pytest.raises(ValueError, match=r"'kernel'.*shape \(3,\).*shape \(2,\)"):
        optimizer.apply_gradients([(mk.constant([1.0, 2.0, 3.0]), a)])
    with pytest.raises(TypeError, match="mk.Variable"):
        optimizer.apply_gradients([(mk.constant([1.0, 2.0]), mk.constant([1.0, 2.0]))])
    with pytest.raises(ValueError, match="Unknown variable"):
        optimizer.apply_gradients([(mk.constant([1.0]), mk.Variable([0.0], name="other"))])
    with pytest.raises(ValueError, match="no \\(gradient, variable\\) pairs"):
        optimizer.apply_gradients([])
    with pytest.raises(ValueError, match="Argument\\(s\\) not recognized"):
        optimizers.Adam(learning_rat=0.1)
    with pytest.raises(ValueError, match="momentum"):
        optimizers.SGD(momentum=1.5)


# -- minimize, compiled steps, bookkeeping ---------------------------------------------------------------
def test_minimize_with_tape_and_callable():
    x = mk.Variable([1.0, -2.0])
    optimizer = optimizers.SGD(learning_rate=0.1)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(x * x)
    optimizer.minimize(loss, [x], tape=tape)
    np.testing.assert_allclose(x.numpy(), [0.8, -1.6], rtol=1e-6)
    returned = optimizer.minimize(lambda: mk.reduce_sum(x * x), lambda: [x])
    np.testing.assert_allclose(x.numpy(), [0.64, -1.28], rtol=1e-6)
    assert int(returned.numpy()) == 2
    with pytest.raises(ValueError, match="`tape` is required"):
        optimizer.minimize(mk.reduce_sum(x * x), [x])


def test_eager_apply_gradients_is_one_compiled_call(monkeypatch):
    optimizer = optimizers.Adam(learning_rate=0.01)
    variables = [mk.Variable(w) for w in INIT]
    optimizer.apply_gradients(zip(GRADS[0], variables))
    eager_ops = count_eager_ops(monkeypatch)
    with mk.GradientTape():  # an enclosing tape neither records the update nor forces it to run eagerly
        for t in range(1, STEPS):
            optimizer.apply_gradients(zip([mk.constant(g) for g in GRADS[t]], variables))
    assert eager_ops == [], f"eager ops ran outside the compiled update: {eager_ops}"
    assert optimizer.update_function(variables).tracing_count == 1
    assert int(optimizer.iterations.numpy()) == STEPS
    assert_same([v.numpy() for v in variables], run_numpy(*numpy_adam(lr=0.01)))


def test_optimizer_inside_mk_function_creates_slots_on_first_call():
    x = mk.constant(RNG.normal(size=(4, 3)).astype(np.float32))
    y = mk.constant(RNG.normal(size=(4, 2)).astype(np.float32))

    def make():
        return mk.Variable(INIT[0], name="kernel"), optimizers.Adam(learning_rate=0.05)

    def loss_fn(w):
        return mk.reduce_mean(mk.square(mk.matmul(x, w) - y))

    w, optimizer = make()

    @mk.function
    def train_step():
        with mk.GradientTape() as tape:
            loss = loss_fn(w)
        optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        return loss

    losses = [float(train_step()) for _ in range(4)]
    assert train_step.tracing_count == 2  # the trace that created the slots and the one after (TF 2.21: 2)
    assert losses[-1] < losses[0]
    assert [v.path for v in optimizer.variables] == [
        "adam/iteration", "adam/learning_rate", "adam/kernel_momentum", "adam/kernel_velocity"]
    w_eager, eager_optimizer = make()
    for _ in range(4):
        with mk.GradientTape() as tape:
            loss = loss_fn(w_eager)
        eager_optimizer.apply_gradients(zip(tape.gradient(loss, [w_eager]), [w_eager]))
    assert_close(w.numpy(), w_eager.numpy(), rtol=1e-5, atol=1e-6)
    assert int(optimizer.iterations.numpy()) == 4


def test_variables_order_names_and_get():
    kernel, bias = mk.Variable(INIT[0], name="kernel"), mk.Variable(INIT[1], name="bias")
    kernel.path, bias.path = "dense/kernel", "dense/bias"
    optimizer = optimizers.get("adam")
    optimizer.build([kernel, bias])
    assert [v.name for v in optimizer.variables] == [  # Keras 3 creates Adam's two slots per variable in turn
        "iteration", "learning_rate", "dense_kernel_momentum", "dense_kernel_velocity", "dense_bias_momentum",
        "dense_bias_velocity"]
    assert optimizer.variables[2].path == "adam/dense_kernel_momentum"
    assert optimizer.iterations.dtype == np.int32 and not optimizer.iterations.trainable
    assert isinstance(optimizers.get("SGD"), optimizers.SGD)
    assert isinstance(optimizers.get("rmsprop"), optimizers.RMSprop)
    assert optimizers.get(optimizer) is optimizer
    with pytest.raises(ValueError, match="Unknown optimizer: 'adamm'.*adam.*rmsprop.*sgd"):
        optimizers.get("adamm")
    sgd = optimizers.SGD(learning_rate=schedules.ExponentialDecay(0.1, 10, 0.9), momentum=0.5, nesterov=True)
    clone = optimizers.deserialize(optimizers.serialize(sgd))
    assert isinstance(clone._learning_rate, schedules.ExponentialDecay)
    assert clone.get_config() == sgd.get_config()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert float(optimizers.Adam(lr=0.5).learning_rate.numpy()) == 0.5

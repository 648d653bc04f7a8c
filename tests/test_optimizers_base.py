"""The base Optimizer's options, as Keras 3 applies them: weight decay (and its exclusions),
the moving average of the weights (use_ema), gradient accumulation, and their argument checks.
References are the written rules in NumPy and optax.MultiSteps."""
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from optimizer_reference import (
    GRADS,
    INIT,
    STEPS,
    assert_same,
    count_eager_ops,
    numpy_adam,
    numpy_nadam,
    numpy_sgd,
    run_mk,
    run_numpy,
)

import minikeras as mk
from minikeras import optimizers
from minikeras.optimizers import schedules

ALL = [optimizers.SGD, optimizers.Adam, optimizers.AdamW, optimizers.Adagrad, optimizers.Adadelta,
       optimizers.Adamax, optimizers.Nadam, optimizers.RMSprop]


def make_variables():
    return [mk.Variable(w, name=f"v{i}") for i, w in enumerate(INIT)]


def apply(optimizer, variables, steps, grads=GRADS):
    for t in range(steps):
        optimizer.apply_gradients(zip([mk.constant(g) for g in grads[t]], variables))
    return [v.numpy() for v in variables]


# -- weight decay --------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_weight_decay_shrinks_the_variable_before_the_update(cls):
    # Keras: var -= var * wd * lr, then the rule (which does not read var): one step with decay
    # equals one step without it from the shrunk start.
    lr, wd = 0.1, 0.3
    decayed = run_mk(cls(learning_rate=lr, weight_decay=wd), steps=1)
    shrunk = [mk.Variable(w * np.float32(1 - wd * lr)) for w in INIT]
    plain = apply(cls(learning_rate=lr, weight_decay=0.0 if cls is optimizers.AdamW else None), shrunk, 1)
    assert_same(decayed, plain)


def test_weight_decay_exclusions_and_schedule():
    lr = schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    optimizer = optimizers.SGD(learning_rate=lr, weight_decay=0.2)
    optimizer.exclude_from_weight_decay(var_names=["^v1$"])  # a regular expression, searched in the name
    expected = [w.astype(np.float64) for w in INIT]
    for t in range(3):
        rate = 0.1 * 0.5 ** t  # the schedule at `iterations`, for the decay and the step
        decay = [0.2, 0.0]  # v1 excluded
        expected = [w - w * d * rate - rate * g for w, d, g in zip(expected, decay, GRADS[t])]
    assert_same(run_mk(optimizer, steps=3), expected)

    variables = make_variables()
    optimizer = optimizers.SGD(learning_rate=0.1, weight_decay=0.5)
    apply(optimizer, variables, 1)
    optimizer.exclude_from_weight_decay(var_list=[variables[0]])  # after building too, as in Keras
    before = [v.numpy() for v in variables]
    after = apply(optimizer, variables, 1, GRADS[1:])
    assert_same(after, [before[0] - 0.1 * GRADS[1][0], before[1] * (1 - 0.05) - 0.1 * GRADS[1][1]])


# -- moving average of the weights -------------------------------------------------------------------------
def numpy_ema(update, slots, ema=0.9, overwrite_every=None, steps=STEPS):
    weights = [w.astype(np.float64) for w in INIT]
    states = [slots(w) for w in weights]
    averages = [np.zeros_like(w) for w in weights]
    for t in range(1, steps + 1):
        for i, g in enumerate(GRADS[t - 1]):
            weights[i], states[i] = update(t, weights[i], g.astype(np.float64), states[i])
            momentum = ema if t > 1 else 0.0  # the first average is the variable itself
            averages[i] = momentum * averages[i] + (1 - momentum) * weights[i]
            if overwrite_every and t % overwrite_every == 0:
                weights[i] = averages[i].copy()
    return weights, averages


def test_ema_averages_and_finalize():
    optimizer = optimizers.SGD(learning_rate=0.1, momentum=0.5, use_ema=True, ema_momentum=0.9)
    variables = make_variables()
    weights = apply(optimizer, variables, STEPS)
    expected_weights, expected_averages = numpy_ema(*numpy_sgd(0.1, 0.5), ema=0.9)
    assert_same(weights, expected_weights)
    assert [v.name for v in optimizer.variables] == ["iteration", "learning_rate", "v0_average", "v1_average",
                                                     "v0_momentum", "v1_momentum"]
    assert_same([v.numpy() for v in optimizer.variables[2:4]], expected_averages)
    optimizer.finalize_variable_values(variables)
    assert_same([v.numpy() for v in variables], expected_averages)
    with pytest.raises(ValueError, match=r"length of model variables \(1\).*\(2\)"):
        optimizer.finalize_variable_values(variables[:1])
    plain = optimizers.SGD()
    plain.finalize_variable_values(variables)  # no-op without use_ema


def test_ema_overwrite_frequency():
    optimizer = optimizers.Adam(learning_rate=0.01, use_ema=True, ema_overwrite_frequency=2)
    expected_weights, expected_averages = numpy_ema(*numpy_adam(lr=0.01), ema=0.99, overwrite_every=2)
    assert_same(run_mk(optimizer), expected_weights)
    assert_same([v.numpy() for v in optimizer.variables[2:4]], expected_averages)


# -- gradient accumulation ---------------------------------------------------------------------------------
def mean_pairs(grads, k):
    return [[np.mean([grads[j][i] for j in range(s, s + k)], axis=0) for i in range(len(grads[0]))]
            for s in range(0, len(grads) - k + 1, k)]


@pytest.mark.parametrize("cls,reference", [(optimizers.Adam, numpy_adam(lr=0.01)),
                                           (optimizers.Nadam, numpy_nadam(0.01))], ids=["adam", "nadam"])
def test_gradient_accumulation_updates_every_n_calls_with_the_mean(cls, reference):
    optimizer = cls(learning_rate=0.01, gradient_accumulation_steps=2)
    result = run_mk(optimizer)  # 5 calls: updates on calls 2 and 4, call 5 only accumulates
    assert_same(result, run_numpy(*reference, steps=2, grads=mean_pairs(GRADS[:4], 2)))
    assert int(optimizer.iterations.numpy()) == 2 and int(optimizer._iterations.numpy()) == 5
    assert [v.name for v in optimizer.variables][2:4] == ["v0_gradient_accumulator", "v1_gradient_accumulator"]
    assert_same([v.numpy() for v in optimizer.variables[2:4]], GRADS[4])


def test_gradient_accumulation_matches_optax_multisteps():
    params = [jnp.asarray(w) for w in INIT]
    transform = optax.MultiSteps(optax.adam(0.01, eps=0.0), every_k_schedule=3)
    state = transform.init(params)
    for t in range(STEPS):
        updates, state = transform.update([jnp.asarray(g) for g in GRADS[t]], state, params)
        params = optax.apply_updates(params, updates)
    result = run_mk(optimizers.Adam(learning_rate=0.01, epsilon=0.0, gradient_accumulation_steps=3))
    assert_same(result, [np.asarray(p) for p in params], rtol=2e-5)


def test_gradient_accumulation_schedule_sees_calls_and_decay_waits_for_the_update():
    lr = schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    optimizer = optimizers.SGD(learning_rate=lr, gradient_accumulation_steps=2, weight_decay=0.1)
    expected = [w.astype(np.float64) for w in INIT]
    for call, grads in ((1, mean_pairs(GRADS[:2], 2)[0]), (3, mean_pairs(GRADS[2:4], 2)[0])):
        rate = 0.1 * 0.5 ** call  # the schedule reads the number of calls, not of updates
        expected = [w - w * 0.1 * rate - rate * g for w, g in zip(expected, grads)]
    assert_same(run_mk(optimizer), expected)


def test_accumulation_and_ema_run_as_one_compiled_call_and_inside_mk_function(monkeypatch):
    def make():
        return make_variables(), optimizers.Nadam(learning_rate=0.01, gradient_accumulation_steps=2, use_ema=True,
                                                  ema_momentum=0.5, ema_overwrite_frequency=2)

    variables, optimizer = make()
    apply(optimizer, variables, 1)
    eager_ops = count_eager_ops(monkeypatch)
    for t in range(1, STEPS):
        optimizer.apply_gradients(zip([mk.constant(g) for g in GRADS[t]], variables))
    monkeypatch.undo()
    assert eager_ops == [], f"eager ops ran outside the compiled update: {eager_ops}"
    assert optimizer.update_function(variables).tracing_count == 1

    traced_variables, traced = make()
    grads = [mk.Variable(g) for g in GRADS[0]]

    @mk.function
    def step():
        traced.apply_gradients(zip([g.value() for g in grads], traced_variables))

    for t in range(STEPS):
        for g, value in zip(grads, GRADS[t]):
            g.assign(value)
        step()
    assert step.tracing_count == 2  # the trace that created the slots and the one after (TF 2.21: 2)
    assert_same([v.numpy() for v in traced_variables], [v.numpy() for v in variables])
    assert_same([v.numpy() for v in traced.variables], [v.numpy() for v in optimizer.variables])


# -- arguments, names ---------------------------------------------------------------------------------------
def test_option_errors_quote_keras():
    with pytest.raises(ValueError, match=r"`ema_momentum` must be in the range \[0, 1\]. Received: ema_momentum=2"):
        optimizers.Adam(use_ema=True, ema_momentum=2.0)
    with pytest.raises(ValueError, match="`ema_overwrite_frequency` must be an integer >= 1 or None. Received: "
                                         "ema_overwrite_frequency=1.5"):
        optimizers.Adagrad(use_ema=True, ema_overwrite_frequency=1.5)
    for steps in (1, 2.5):
        with pytest.raises(ValueError, match="`gradient_accumulation_steps` must be an integer >= 2. Received"):
            optimizers.Adadelta(gradient_accumulation_steps=steps)
    optimizers.SGD(ema_momentum=2.0)  # only checked with use_ema, as in Keras
    with pytest.raises(ValueError, match=r"Argument\(s\) not recognized: \{'rho': 0.5\}"):
        optimizers.Nadam(rho=0.5)


def test_get_every_optimizer_by_name_and_round_trip():
    for cls in ALL:
        optimizer = optimizers.get(cls.__name__.lower())
        assert type(optimizer) is cls
        config = optimizers.serialize(cls(learning_rate=0.05, use_ema=True, gradient_accumulation_steps=4))
        clone = optimizers.deserialize(config)
        assert type(clone) is cls and clone.get_config() == cls.from_config(config["config"]).get_config()
        assert (clone.use_ema, clone.gradient_accumulation_steps) == (True, 4)
    with pytest.raises(ValueError, match="Unknown optimizer: 'adam_w'.*adadelta.*adagrad.*adamax.*adamw.*nadam"):
        optimizers.get("adam_w")


def test_finalize_before_build_says_so():
    with pytest.raises(ValueError, match=r"length of model variables \(2\).*\(0\).*called on your model"):
        optimizers.Adam(use_ema=True).finalize_variable_values(make_variables())


def test_fit_ends_with_the_ema_weights_as_keras_does():
    mk.random.set_seed(0)
    model = mk.Sequential([mk.layers.Dense(2)])
    optimizer = optimizers.SGD(learning_rate=0.1, use_ema=True, ema_momentum=0.5)
    model.compile(optimizer=optimizer, loss="mse")
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
    y = np.ones((8, 2), np.float32)
    model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    averages = [v.numpy() for v in optimizer.variables if v.name.endswith("_average")]
    assert len(averages) == 2
    assert_same([w.numpy() for w in model.trainable_weights], averages)

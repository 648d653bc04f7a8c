"""The fused recurrent loop (``layers/rnn/rnn_fused.py``): every built-in recurrent layer's
outputs, final states and tape gradients (of the input, the initial states and every weight)
against ``jax.grad`` of a straightforward ``lax.scan`` of Keras 3's formulas
(``rnn_reference``): masks, both directions, ``return_sequences``, ``unroll``, dropout masks
(input and recurrent, one per gate), no bias, other activations, stacked cells, Bidirectional,
and second order through the tape. Each group of cases is one compiled program."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import rnn_reference
from conftest import assert_close

import minikeras as mk
from minikeras.xla_cpu import matmul_native, native_build, rnn_step_native, tuning

L = mk.layers
B, T, D = 3, 5, 2
RNG = np.random.default_rng(0)


def _array(*shape):
    return RNG.normal(size=shape).astype("float32")


# name: (layer, reference cell kinds, options); every case runs on a mask with a fully masked
# first step for one sequence and gaps for another
CASES = {
    "lstm": (lambda: L.LSTM(4, return_sequences=True, return_state=True), ["lstm"], {"states": True}),
    "lstm_acts": (lambda: L.LSTM(3, activation="relu", recurrent_activation="hard_sigmoid", return_sequences=True),
                  ["lstm"], {"act": jax.nn.relu, "rec": jax.nn.hard_sigmoid}),
    "lstm_no_bias_unroll_backwards": (lambda: L.LSTM(3, use_bias=False, unroll=True, go_backwards=True), ["lstm"],
                                      {}),
    "gru": (lambda: L.GRU(4, return_sequences=True, return_state=True), ["gru"], {"states": True}),
    "gru_no_bias_backwards_zeros": (lambda: L.GRU(4, use_bias=False, return_sequences=True, go_backwards=True,
                                                  zero_output_for_mask=True), ["gru"], {"zero_output": True}),
    "gru_before": (lambda: L.GRU(4, reset_after=False, return_sequences=True, return_state=True), ["gru_before"],
                   {"states": True}),
    "gru_before_backwards": (lambda: L.GRU(3, reset_after=False, go_backwards=True, unroll=True), ["gru_before"], {}),
    "simple_relu": (lambda: L.SimpleRNN(4, activation="relu", return_sequences=True, return_state=True), ["simple"],
                    {"states": True, "act": jax.nn.relu}),
    "stacked": (lambda: L.RNN([L.LSTMCell(4), L.GRUCell(3), L.SimpleRNNCell(2)], return_sequences=True,
                              return_state=True), ["lstm", "gru", "simple"], {"states": True}),
    "stacked_backwards_last": (lambda: L.RNN([L.GRUCell(3, reset_after=False), L.LSTMCell(2)], go_backwards=True),
                               ["gru_before", "lstm"], {}),
    # dropout: the layer's masks are replaced by known ones (drawn below), the reference gets the same
    "lstm_dropout": (lambda: L.LSTM(4, dropout=0.5, recurrent_dropout=0.5, return_sequences=True), ["lstm"],
                     {"dropout": True}),
    "gru_dropout": (lambda: L.GRU(3, dropout=0.5, recurrent_dropout=0.5, go_backwards=True), ["gru"],
                    {"dropout": True}),
    "gru_before_dropout": (lambda: L.GRU(3, reset_after=False, dropout=0.5, recurrent_dropout=0.5,
                                         return_sequences=True), ["gru_before"], {"dropout": True}),
    "simple_dropout": (lambda: L.SimpleRNN(3, dropout=0.5, recurrent_dropout=0.5, return_sequences=True),
                       ["simple"], {"dropout": True}),
    # 16 units: the LSTM's whole loops on xla_cpu.rnn_loops_native's kernels where they are built
    "lstm16": (lambda: L.LSTM(16, return_sequences=True, return_state=True), ["lstm"], {"states": True}),
    "lstm16_input_dropout_backwards": (lambda: L.LSTM(16, dropout=0.5, go_backwards=True, return_sequences=True),
                                       ["lstm"], {"dropout": True, "input_dropout_only": True}),
    "lstm16_no_bias": (lambda: L.LSTM(16, use_bias=False), ["lstm"], {}),
    "gru16": (lambda: L.GRU(16, return_sequences=True, return_state=True), ["gru"], {"states": True}),
    "gru16_input_dropout_backwards": (lambda: L.GRU(16, dropout=0.5, go_backwards=True, return_sequences=True),
                                      ["gru"], {"dropout": True, "input_dropout_only": True}),
    "gru16_no_bias": (lambda: L.GRU(16, use_bias=False), ["gru"], {}),
}

MASK = np.ones((B, T), bool)
MASK[0, :2] = False  # the first steps masked: the output is zeros until the first unmasked one
MASK[1, 1] = MASK[1, 3] = False
MASK[2, -1] = False  # the last step masked: the last output repeats the one before


def _cells(layer):
    return list(layer.cell.cells) if isinstance(layer.cell, L.StackedRNNCells) else [layer.cell]


def _dropout_masks(cell, dim):
    """Keras's structure: one mask each for SimpleRNN, one per gate for LSTM and GRU; values 0 or 2."""
    gates = {L.SimpleRNNCell: 1, L.LSTMCell: 4}.get(type(cell), 3)
    shape_in, shape_rec = (gates, B, dim), (gates, B, cell.units)
    dp = (RNG.random(shape_in) < 0.5).astype("float32") * 2
    rdp = (RNG.random(shape_rec) < 0.5).astype("float32") * 2
    return dp, rdp


def _setup(name):
    make, kinds, options = CASES[name]
    layer = make()
    layer.build((B, T, D))
    cells = _cells(layer)
    states = []
    if options.get("states"):
        states = [_array(B, n) for c in cells for n in (c.state_size if isinstance(c.state_size, list)
                                                        else [c.state_size])]
    drop = None
    if options.get("dropout"):
        (cell,) = cells
        dp, rdp = _dropout_masks(cell, D)
        if options.get("input_dropout_only"):
            dp = dp[:1]  # one mask for every gate
            cell.dropout_masks = lambda *args, **kwargs: (mk.constant(dp[0]), None)
            drop = ([np.repeat(dp, 4 if isinstance(cell, L.LSTMCell) else 3, axis=0)], None)
        else:
            simple = isinstance(cell, L.SimpleRNNCell)
            layer_masks = (dp[0], rdp[0]) if simple else (dp, rdp)
            cell.dropout_masks = lambda *args, **kwargs: tuple(mk.constant(m) for m in layer_masks)
            drop = ([dp], [rdp])
    return layer, kinds, options, states, drop


def _reference_outputs(layer, kinds, options, drop):
    """The reference's outputs (the layer's, flattened) as a function of ``(x, states, weights)``."""
    def outputs(x, states, weights):
        per_cell, i = [], 0
        for kind in kinds:
            n = 2 if kind == "lstm" else 1
            per_cell.append(states[i:i + n])
            i += n
        if not states:
            per_cell = [tuple(jnp.zeros((B, w[1].shape[0])) for _ in range(2 if k == "lstm" else 1))
                        for k, w in zip(kinds, weights)]
        out, final = rnn_reference.layer(
            kinds, weights, x, per_cell, jnp.asarray(MASK), dps=None if drop is None else drop[0],
            rdps=None if drop is None or drop[1] is None else drop[1], go_backwards=layer.go_backwards,
            sequence=layer.return_sequences, zero_output=options.get("zero_output", False),
            act=options.get("act", jnp.tanh), rec=options.get("rec", jax.nn.sigmoid))
        return [out] + ([s for f in final for s in f] if layer.return_state else [])
    return outputs


def _reference_loss(layer, kinds, options, drop):
    outputs = _reference_outputs(layer, kinds, options, drop)

    def loss(x, states, weights, rs):
        outs = outputs(x, states, weights)
        assert len(outs) == len(rs)
        return sum(jnp.sum(o * r) for o, r in zip(outs, rs)), outs
    return loss


def _weights(layer):
    return [[w.numpy() for w in c.step_weights()] for c in _cells(layer)]


def _flatten(outs):
    if isinstance(outs, (list, tuple)):
        return [leaf for o in outs for leaf in _flatten(o)]
    return [outs]


@pytest.fixture(scope="module")
def first_order():
    names = sorted(CASES)
    setups = {name: _setup(name) for name in names}
    x = _array(B, T, D)

    @mk.function(autograph=False)
    def run(x, mask, states, rs):
        found = {}
        for name in names:
            layer, _, options, _, _ = setups[name]
            with mk.GradientTape() as tape:
                tape.watch(x)
                for s in states[name]:
                    tape.watch(s)
                kwargs = {"initial_state": list(states[name])} if states[name] else {}
                outs = _flatten(layer(x, mask=mask, training=bool(options.get("dropout")), **kwargs))
                loss = sum(mk.reduce_sum(o * r) for o, r in zip(outs, rs[name]))
            found[name] = (outs, tape.gradient(loss, [x] + list(states[name]) + layer.trainable_weights))
        return found

    rs = {}
    for name in names:
        layer, kinds, options, states, drop = setups[name]
        outputs = _reference_outputs(layer, kinds, options, drop)
        rs[name] = [_array(*o.shape) for o in jax.eval_shape(outputs, x, states, _weights(layer))]
    found = run(mk.constant(x), mk.constant(MASK), {n: [mk.constant(s) for s in setups[n][3]] for n in names},
                {n: [mk.constant(r) for r in rs[n]] for n in names})

    @jax.jit
    def reference(x, states, weights, rs):  # every case's reference in one compiled program
        return {name: jax.value_and_grad(_reference_loss(*[setups[name][k] for k in (0, 1, 2, 4)]),
                                         argnums=(0, 1, 2), has_aux=True)(x, states[name], weights[name], rs[name])
                for name in names}

    wanted = reference(x, {n: setups[n][3] for n in names}, {n: _weights(setups[n][0]) for n in names}, rs)
    return found, wanted


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_and_gradients_match_the_reference_scan(name, first_order):
    found, wanted = first_order
    (_, want_outs), grads = wanted[name]
    outs, got = found[name]
    for o, w in zip(outs, want_outs):
        assert_close(o.numpy(), w, rtol=1e-5, atol=1e-6, what=f"{name} output")
    want = [grads[0]] + list(grads[1]) + [g for cell in grads[2] for g in cell]
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_close(g.numpy(), w, rtol=1e-5, atol=1e-5, what=f"{name} gradient {k}")


def test_bidirectional_matches_two_reference_scans():
    layer = L.Bidirectional(L.LSTM(3, return_sequences=True))
    layer.build((B, T, D))
    x, r = _array(B, T, D), _array(B, T, 6)

    @mk.function(autograph=False)
    def run(x, mask):
        with mk.GradientTape() as tape:
            tape.watch(x)
            loss = mk.reduce_sum(layer(x, mask=mask) * r)
        return tape.gradient(loss, [x] + layer.trainable_weights)

    def reference(x, fw, bw):
        zeros = (jnp.zeros((B, 3)),) * 2
        y, _ = rnn_reference.layer(["lstm"], [fw], x, [zeros], jnp.asarray(MASK), sequence=True, zero_output=True)
        y_rev, _ = rnn_reference.layer(["lstm"], [bw], x, [zeros], jnp.asarray(MASK), go_backwards=True,
                                       sequence=True, zero_output=True)
        return jnp.sum(jnp.concatenate([y, y_rev[:, ::-1]], axis=-1) * r)

    weights = [w.numpy() for w in layer.trainable_weights]
    want = jax.jit(jax.grad(reference, argnums=(0, 1, 2)))(x, weights[:3], weights[3:])
    got = run(mk.constant(x), mk.constant(MASK))
    for g, w in zip(got, [want[0]] + list(want[1]) + list(want[2])):
        assert_close(g.numpy(), w, rtol=1e-5, atol=1e-5)


def test_second_order_through_the_tape():
    """d/dw of sum(r * d loss/dw) for each layer (masked, the GRU going backwards), one program."""
    kinds = ["lstm", "gru", "gru_before", "simple"]
    layers = [L.LSTM(3, return_sequences=True), L.GRU(3, go_backwards=True),
              L.GRU(3, reset_after=False, return_sequences=True), L.SimpleRNN(3, go_backwards=True)]
    for layer in layers:
        layer.build((B, T, D))
    x = _array(B, T, D)
    rs = [_array(B, T, 3), _array(B, 3), _array(B, T, 3), _array(B, 3)]
    inner_rs = [[_array(*w.shape) for w in layer.trainable_weights] for layer in layers]

    @mk.function(autograph=False)
    def run(x, mask):
        found = []
        for layer, r, irs in zip(layers, rs, inner_rs):
            with mk.GradientTape() as outer:
                outer.watch(x)
                with mk.GradientTape() as inner:
                    inner.watch(x)
                    loss = mk.reduce_sum(layer(x, mask=mask) * r)
                grads = inner.gradient(loss, [x] + layer.trainable_weights)
                second = sum(mk.reduce_sum(g * q) for g, q in zip(grads, [r_x] + irs))
            found.append(outer.gradient(second, [x] + layer.trainable_weights))
        return found

    r_x = _array(B, T, D)
    got = run(mk.constant(x), mk.constant(MASK))

    def second(kind, layer, r, irs, x, w):
        def loss(x, w):
            init = [tuple(jnp.zeros((B, 3)) for _ in range(2 if kind == "lstm" else 1))]
            out, _ = rnn_reference.layer([kind], [w], x, init, jnp.asarray(MASK), go_backwards=layer.go_backwards,
                                         sequence=layer.return_sequences)
            return jnp.sum(out * r)
        gx, gw = jax.grad(loss, argnums=(0, 1))(x, w)
        return jnp.sum(gx * r_x) + sum(jnp.sum(a * q) for a, q in zip(gw, irs))

    @jax.jit
    def reference(x, weights):
        return [jax.grad(lambda x, w: second(kind, layer, r, irs, x, w), argnums=(0, 1))(x, w)
                for kind, layer, r, irs, w in zip(kinds, layers, rs, inner_rs, weights)]

    wanted = reference(x, [[w.numpy() for w in layer.trainable_weights] for layer in layers])
    for kind, g, (want_x, want_w) in zip(kinds, got, wanted):
        for a, b in zip(g, [want_x] + list(want_w)):
            assert_close(a.numpy(), b, rtol=1e-4, atol=1e-5, what=f"{kind} second order")


@pytest.mark.parametrize("two_threads", [False, True])
def test_step_products_on_the_native_kernels(monkeypatch, two_threads):
    """With 16 units the backward step's ``dz @ U.T`` runs on ``xla_cpu.matmul_native``'s kernel, or
    (``two_threads``) both steps' products on ``xla_cpu.rnn_step_native``'s two-thread kernel (every
    size let through): the tape's gradients still match the reference scan's, masked, both
    directions, the GRU's reset_after settings and per-gate recurrent dropout masks."""
    if not matmul_native.available() or (two_threads and not rnn_step_native.available()):
        pytest.skip("matmul_native.cc or rnn_step_native.cc could not be built here")
    monkeypatch.setattr(tuning, "MATMUL_NN_NATIVE_FLOPS", 0)
    monkeypatch.setattr(tuning, "MATMUL_NN_NATIVE_NEEDS_AVX512", False)
    monkeypatch.setattr(tuning, "RNN_STEP_TWO_THREADS", two_threads)
    monkeypatch.setattr(tuning, "RNN_STEP_TWO_THREADS_FLOPS", 0)
    monkeypatch.setattr(tuning, "LSTM_NATIVE", False)  # the steps too, not the whole loops
    monkeypatch.setattr(tuning, "GRU_NATIVE", False)
    monkeypatch.setattr(native_build, "usable_cpus", lambda: 2)  # a one-CPU runner still runs the pair
    assert matmul_native.supported_nn((B, 64), (64, 16), jnp.float32)
    assert rnn_step_native.supported((B, 16), (16, 64), jnp.float32) == two_threads
    kinds = ["lstm", "gru_before", "gru", "simple"]
    layers = [L.LSTM(16, return_sequences=True), L.GRU(16, reset_after=False, go_backwards=True, dropout=0.5,
                                                          recurrent_dropout=0.5),
              L.GRU(16, go_backwards=True), L.SimpleRNN(16, return_sequences=True)]
    for layer in layers:
        layer.build((B, T, D))
    dp, rdp = _dropout_masks(layers[1].cell, D)
    layers[1].cell.dropout_masks = lambda *args, **kwargs: (mk.constant(dp), mk.constant(rdp))
    x = _array(B, T, D)
    rs = [_array(B, T, 16), _array(B, 16), _array(B, 16), _array(B, T, 16)]

    @mk.function(autograph=False)
    def run(x, mask):
        found = []
        for layer, r in zip(layers, rs):
            with mk.GradientTape() as tape:
                tape.watch(x)
                loss = mk.reduce_sum(layer(x, mask=mask, training=True) * r)
            found.append(tape.gradient(loss, [x] + layer.trainable_weights))
        return found

    @jax.jit
    def reference(x, weights):
        def loss(kind, layer, r, x, w):
            init = [tuple(jnp.zeros((B, 16)) for _ in range(2 if kind == "lstm" else 1))]
            drop = {"dps": [dp], "rdps": [rdp]} if kind == "gru_before" else {}
            out, _ = rnn_reference.layer([kind], [w], x, init, jnp.asarray(MASK), go_backwards=layer.go_backwards,
                                         sequence=layer.return_sequences, **drop)
            return jnp.sum(out * r)
        return [jax.grad(functools.partial(loss, kind, layer, r), argnums=(0, 1))(x, w)
                for kind, layer, r, w in zip(kinds, layers, rs, weights)]

    got = run(mk.constant(x), mk.constant(MASK))
    wanted = reference(x, [[w.numpy() for w in layer.trainable_weights] for layer in layers])
    for kind, g, (want_x, want_w) in zip(kinds, got, wanted):
        for a, b in zip(g, [want_x] + list(want_w)):
            assert_close(a.numpy(), b, rtol=1e-5, atol=1e-5, what=f"{kind} on the native product")


def _native_loop_calls(monkeypatch):
    """Counts the traces of ``xla_cpu.rnn_loops_native``'s forward and backward loops."""
    from minikeras.xla_cpu import rnn_loops_native
    calls = {"lstm_forward": 0, "lstm_backward": 0, "gru_forward": 0, "gru_backward": 0}
    for name in calls:
        kernel = getattr(rnn_loops_native, name)

        def spy(*args, name=name, kernel=kernel):
            calls[name] += 1
            return kernel(*args)
        monkeypatch.setattr(rnn_loops_native, name, spy)
    return calls


def _native_loops_here():
    from minikeras.xla_cpu import rnn_loops_native
    return rnn_loops_native.available() and rnn_loops_native.supported("lstm", (T, B, 64), 16, jnp.float32)


def test_lstm_and_gru_of_16_units_run_their_loops_natively_and_others_do_not(monkeypatch):
    if not _native_loops_here():
        pytest.skip("rnn_loops_native.cc is not built or not used here (it needs AVX-512)")
    calls = _native_loop_calls(monkeypatch)
    x = mk.constant(_array(B, T, D))

    def traced(layer):
        layer.build((B, T, D))

        @mk.function(autograph=False)
        def run(x):
            with mk.GradientTape() as tape:
                loss = mk.reduce_sum(layer(x, training=True))
            return tape.gradient(loss, layer.trainable_weights)
        before = dict(calls)
        run(x)
        return tuple(sorted(k for k in calls if calls[k] > before[k]))

    lstm, gru = ("lstm_backward", "lstm_forward"), ("gru_backward", "gru_forward")
    assert traced(L.LSTM(16)) == lstm
    assert traced(L.LSTM(16, dropout=0.5)) == lstm
    assert traced(L.GRU(16)) == gru
    assert traced(L.GRU(16, dropout=0.5, go_backwards=True)) == gru
    assert traced(L.LSTM(16, recurrent_dropout=0.5)) == ()
    assert traced(L.GRU(16, recurrent_dropout=0.5)) == ()
    assert traced(L.GRU(16, reset_after=False)) == ()
    assert traced(L.LSTM(12)) == ()          # 12 % 16
    assert traced(L.LSTM(16, activation="relu")) == ()
    monkeypatch.setattr(tuning, "LSTM_NATIVE", False)
    assert traced(L.LSTM(16)) == ()
    assert traced(L.GRU(16)) == gru
    monkeypatch.setattr(tuning, "GRU_NATIVE", False)
    assert traced(L.GRU(16)) == ()


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_native_loops_bidirectional_and_second_order_through_the_tape(monkeypatch, kind):
    """Bidirectional(LSTM(16) or GRU(16)) on the mask: the tape's gradients, and d/dw of sum(r * d
    loss/dw) (the kernels' derivatives are those of the same loops as lax.scan), against the reference."""
    if not _native_loops_here():
        pytest.skip("rnn_loops_native.cc is not built or not used here (it needs AVX-512)")
    calls = _native_loop_calls(monkeypatch)
    layer = L.Bidirectional((L.LSTM if kind == "lstm" else L.GRU)(16, return_sequences=True))
    layer.build((B, T, D))
    x, r, r_x = _array(B, T, D), _array(B, T, 32), _array(B, T, D)
    irs = [_array(*w.shape) for w in layer.trainable_weights]

    @mk.function(autograph=False)
    def run(x, mask):
        with mk.GradientTape() as outer:
            outer.watch(x)
            with mk.GradientTape() as inner:
                inner.watch(x)
                loss = mk.reduce_sum(layer(x, mask=mask) * r)
            grads = inner.gradient(loss, [x] + layer.trainable_weights)
            second = sum(mk.reduce_sum(g * q) for g, q in zip(grads, [r_x] + irs))
        return grads, outer.gradient(second, [x] + layer.trainable_weights)

    def loss(x, w):
        zeros = (jnp.zeros((B, 16)),) * (2 if kind == "lstm" else 1)
        y, _ = rnn_reference.layer([kind], [w[:3]], x, [zeros], jnp.asarray(MASK), sequence=True, zero_output=True)
        y_rev, _ = rnn_reference.layer([kind], [w[3:]], x, [zeros], jnp.asarray(MASK), go_backwards=True,
                                       sequence=True, zero_output=True)
        return jnp.sum(jnp.concatenate([y, y_rev[:, ::-1]], axis=-1) * r)

    def second(x, w):
        gx, gw = jax.grad(loss, argnums=(0, 1))(x, w)
        return jnp.sum(gx * r_x) + sum(jnp.sum(a * q) for a, q in zip(gw, irs))

    weights = [w.numpy() for w in layer.trainable_weights]
    want_first = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, weights)
    want_second = jax.jit(jax.grad(second, argnums=(0, 1)))(x, weights)
    got_first, got_second = run(mk.constant(x), mk.constant(MASK))
    assert calls[f"{kind}_forward"] >= 2 and calls[f"{kind}_backward"] >= 2  # both directions' loops, natively
    for g, w in zip(got_first, [want_first[0]] + list(want_first[1])):
        assert_close(g.numpy(), w, rtol=1e-5, atol=1e-5, what="first order")
    for g, w in zip(got_second, [want_second[0]] + list(want_second[1])):
        assert_close(g.numpy(), w, rtol=1e-4, atol=1e-5, what="second order")

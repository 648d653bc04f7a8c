"""LSTM(128) / GRU(128) sequence classifiers: training samples/s of minikeras's ``mk.function``
tape step and ``fit`` against a hand-written ``jax.jit`` + ``lax.scan`` step and TensorFlow's
``@tf.function`` step on Keras layers (run in a process of its own), time per step against the
sequence length, the first call (trace + compile) of each, and the CPUs each process kept busy
(its CPU time over the wall time, median of the rounds: a framework that ran on one core of two
shows about 1).

    python benchmarks/rnn_step.py                       # LSTM and GRU, length 100, batch 64
    python benchmarks/rnn_step.py --lengths 25 50 100 200 --batches 16 64 256   # ms per step on the grid
    python benchmarks/rnn_step.py --grid --no-tf                # the same grid (issue 40's)
    python benchmarks/rnn_step.py --tf-python /path/to/python-with-tensorflow
    python benchmarks/rnn_step.py --units 8 --length 6 --steps 3 --rounds 1 --lengths 4 8 --batches 2 4  # smoke

The model: ``[LSTM|GRU](units)`` on (batch, length, features) -> ``Dense(10, softmax)``,
sparse categorical cross-entropy, Adam(1e-3). ``--lengths`` (with ``--batches``, default the one
``--batch``) adds a grid of the tape step against the jax step: ms per step and first call.
The minikeras model is built once per kind (seed 0);
every contender starts from its initial weights (the tape step and ``fit`` train that one model,
its weights restored before each compiles; the jax step and TensorFlow's model get the same
arrays). A contender's time is the median of ``--rounds`` runs of ``--steps`` steps; the tape
step, ``fit`` and the jax step run in turn within each round, so that a change in the machine's
load hits all three alike (TensorFlow runs its rounds in its own process).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
DEFAULT_TF_PYTHON = os.environ.get("MINIKERAS_TF_PYTHON", "")  # a Python with TensorFlow, if not this one


def data(args, length, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(args.steps, args.batch, length, args.features)).astype("float32")
    y = rng.integers(0, 10, size=(args.steps, args.batch)).astype("int32")
    return x, y


def timed(first, run, steps, batch):
    """Times ``first()`` (trace + compile); returns the row with ``run`` (all the steps, to be
    timed by ``time_rounds`` beside the other contenders' runs)."""
    start = time.perf_counter()
    first()
    return {"first_call_s": time.perf_counter() - start, "run": run}


def time_rounds(rows, args):
    """Times the ``run`` of each row ``args.rounds`` times, the rows in turn within each round
    (so that a change in the machine's load hits all alike); fills in each row's median, and the
    median of the CPUs the process kept busy per round (its CPU time over the wall time: a
    framework that ran on one core of two shows about 1)."""
    times = {name: [] for name, row in rows.items() if "run" in row}
    busy = {name: [] for name in times}
    for _ in range(args.rounds):
        for name in times:
            start, start_cpu = time.perf_counter(), time.process_time()
            rows[name]["run"]()
            times[name].append(time.perf_counter() - start)
            busy[name].append((time.process_time() - start_cpu) / times[name][-1])
    for name, values in times.items():
        per_step = sorted(values)[len(values) // 2] / args.steps
        rows[name].pop("run")
        rows[name].update(step_ms=1e3 * per_step, samples_per_s=args.batch / per_step,
                          cpus_busy=sorted(busy[name])[len(values) // 2])
    return rows


# -- minikeras ------------------------------------------------------------------------------------
class SharedModel:
    """The one minikeras model of a kind (built once, seed 0) and its initial weights, which each
    contender starts from: ``fresh()`` gives the model with them restored."""

    def __init__(self, kind, args):
        import minikeras as mk
        mk.random.set_seed(0)
        recurrent = mk.layers.LSTM if kind == "lstm" else mk.layers.GRU
        self.model = mk.Sequential([recurrent(args.units), mk.layers.Dense(10, activation="softmax")])
        self.model.build((None, None, args.features))
        self.weights = self.model.get_weights()  # kernel, recurrent_kernel, bias, dense kernel, dense bias

    def fresh(self):
        self.model.set_weights(self.weights)
        return self.model


def minikeras_tape(shared, args, length):
    import minikeras as mk
    model = shared.fresh()
    optimizer = mk.optimizers.Adam(1e-3)
    loss_fn = mk.losses.SparseCategoricalCrossentropy()

    @mk.function
    def step(x, y):
        with mk.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    x, y = data(args, length)
    xs = [mk.constant(a) for a in x]
    ys = [mk.constant(a) for a in y]

    def run():
        for a, b in zip(xs, ys):
            loss = step(a, b)
        loss.numpy()
    return timed(lambda: step(xs[0], ys[0]).numpy(), run, args.steps, args.batch)


def minikeras_fit(shared, args, length):
    import minikeras as mk
    model = shared.fresh()
    model.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    x, y = data(args, length)
    x, y = x.reshape((-1,) + x.shape[2:]), y.reshape(-1)
    first = lambda: model.fit(x[:args.batch], y[:args.batch], batch_size=args.batch, epochs=1, verbose=0)  # noqa
    run = lambda: model.fit(x, y, batch_size=args.batch, epochs=1, verbose=0, shuffle=False)  # noqa
    return timed(first, run, args.steps, args.batch)


# -- hand-written jax -----------------------------------------------------------------------------
def jax_step(kind, args, length, weights):
    """The same model in plain jax: the input projection for all steps, then lax.scan."""
    import jax
    import jax.numpy as jnp
    import optax

    u = args.units
    params = dict(zip(("k", "r", "b", "w", "c"), (np.asarray(w) for w in weights)))  # GRU's b: (2, 3 units)

    def lstm_step(r, carry, p):
        h, c = carry
        z = p + h @ r
        i, fg, g, o = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(fg) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), None

    def gru_step(r, b, h, p):
        inner = h @ r + b
        xz, xr, xh = jnp.split(p, 3, axis=-1)
        rz, rr, rh = jnp.split(inner, 3, axis=-1)
        z, rg = jax.nn.sigmoid(xz + rz), jax.nn.sigmoid(xr + rr)
        h = z * h + (1 - z) * jnp.tanh(xh + rg * rh)
        return h, None

    def loss_fn(params, x, y):
        bias = params["b"] if kind == "lstm" else params["b"][0]
        proj = jnp.swapaxes(x @ params["k"] + bias, 0, 1)
        zeros = jnp.zeros((x.shape[0], u), x.dtype)
        if kind == "lstm":
            (h, _), _ = jax.lax.scan(lambda c, p: lstm_step(params["r"], c, p), (zeros, zeros), proj)
        else:
            h, _ = jax.lax.scan(lambda c, p: gru_step(params["r"], params["b"][1], c, p), zeros, proj)
        logits = h @ params["w"] + params["c"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    optimizer = optax.adam(1e-3)
    state = [params, optimizer.init(params)]

    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    x, y = data(args, length)
    xs, ys = [jnp.asarray(a) for a in x], [jnp.asarray(a) for a in y]

    def one(i):
        state[0], state[1], loss = step(state[0], state[1], xs[i], ys[i])
        return loss

    def run():
        for i in range(len(xs)):
            loss = one(i)
        loss.block_until_ready()
    return timed(lambda: one(0).block_until_ready(), run, args.steps, args.batch)


# -- TensorFlow (in its own process) --------------------------------------------------------------
def tf_child(kind, args, length):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.keras.utils.set_random_seed(0)
    recurrent = tf.keras.layers.LSTM if kind == "lstm" else tf.keras.layers.GRU
    model = tf.keras.Sequential([tf.keras.Input((None, args.features)), recurrent(args.units),
                                 tf.keras.layers.Dense(10, activation="softmax")])
    with np.load(args.weights) as saved:
        model.set_weights([saved[f"arr_{i}"] for i in range(len(saved.files))])
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    x, y = data(args, length)
    xs, ys = [tf.constant(a) for a in x], [tf.constant(a) for a in y]

    def run():
        for a, b in zip(xs, ys):
            loss = step(a, b)
        loss.numpy()
    return time_rounds({"tf": timed(lambda: step(xs[0], ys[0]).numpy(), run, args.steps, args.batch)}, args)["tf"]


def tensorflow(kind, args, length, weights):
    python = args.tf_python or DEFAULT_TF_PYTHON or sys.executable
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "weights.npz")
        np.savez(path, *weights)
        command = [python, __file__, "--tf-child", kind, "--length", str(length), "--steps", str(args.steps),
                   "--batch", str(args.batch), "--units", str(args.units), "--features", str(args.features),
                   "--rounds", str(args.rounds), "--weights", path]
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_kind(kind, args):
    """Times every contender on one kind of model and prints its table."""
    print(f"{kind.upper()}({args.units}), length {args.length}, {args.features} features, batch {args.batch}")
    shared = SharedModel(kind, args)
    rows = {"minikeras tape step": minikeras_tape(shared, args, args.length),  # compiled now, timed below
            "minikeras fit": minikeras_fit(shared, args, args.length),
            "jax.jit + lax.scan": jax_step(kind, args, args.length, shared.weights)}
    if not args.no_tf:  # its rounds run in its own process, before ours
        rows["TensorFlow @tf.function"] = tensorflow(kind, args, args.length, shared.weights)
    time_rounds(rows, args)
    jax_rate = rows["jax.jit + lax.scan"]["samples_per_s"]
    tf_rate = rows.get("TensorFlow @tf.function", {}).get("samples_per_s")
    print(f"  {'contender':26s} {'samples/s':>10s} {'ms/step':>8s} {'first call s':>12s} {'vs jax':>7s} "
          f"{'vs TF':>6s} {'CPUs busy':>9s}")
    for name, row in rows.items():
        if "error" in row:
            print(f"  {name:26s} unavailable: {row['error']}")
            continue
        vs_tf = f"{row['samples_per_s'] / tf_rate:6.2f}" if tf_rate else "     -"
        busy = f"{row['cpus_busy']:9.2f}" if "cpus_busy" in row else f"{'-':>9s}"
        print(f"  {name:26s} {row['samples_per_s']:10.0f} {row['step_ms']:8.2f} {row['first_call_s']:12.2f} "
              f"{row['samples_per_s'] / jax_rate:7.2f} {vs_tf} {busy}")
    if args.lengths:
        print(f"  {'length':>6s} {'batch':>5s} {'tape ms/step':>12s} {'jax ms/step':>11s} {'vs jax':>8s} "
              f"{'tape first s':>12s} {'jax first s':>11s}")
    for length in args.lengths:
        for batch in args.batches or [args.batch]:
            sized = argparse.Namespace(**{**vars(args), "batch": batch})
            timings = time_rounds({"tape": minikeras_tape(shared, sized, length),
                                   "jax": jax_step(kind, sized, length, shared.weights)}, sized)
            tape, ref = timings["tape"], timings["jax"]
            print(f"  {length:6d} {batch:5d} {tape['step_ms']:12.2f} {ref['step_ms']:11.2f} "
                  f"{ref['step_ms'] / tape['step_ms']:8.2f} {tape['first_call_s']:12.2f} {ref['first_call_s']:11.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kinds", nargs="+", default=["lstm", "gru"], choices=["lstm", "gru"])
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--lengths", type=int, nargs="*", default=[], help="also time the tape step at these")
    parser.add_argument("--batches", type=int, nargs="*", default=[], help="... and these batch sizes")
    parser.add_argument("--grid", action="store_true",
                        help="the grid of lengths 25 50 100 200 and batches 16 64 256 (sets --lengths and --batches)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--units", type=int, default=128)
    parser.add_argument("--steps", type=int, default=50, help="timed steps per contender and round")
    parser.add_argument("--rounds", type=int, default=3,
                        help="each contender's steps are timed this many times, in turn with the others (median)")
    parser.add_argument("--tf-python", default=None,
                        help="a Python with TensorFlow (default: $MINIKERAS_TF_PYTHON, else this interpreter)")
    parser.add_argument("--no-tf", action="store_true")
    parser.add_argument("--tf-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--weights", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.grid:
        args.lengths, args.batches = [25, 50, 100, 200], [16, 64, 256]
    if args.tf_child:
        print(json.dumps(tf_child(args.tf_child, args, args.length)))
        return
    from common import CpuSteal, cpu_model
    with CpuSteal() as steal:
        for kind in args.kinds:
            run_kind(kind, args)
    print(f"{cpu_model()}; {steal.describe()}")


if __name__ == "__main__":
    main()

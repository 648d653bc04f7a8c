"""Text generation, one character per call: the text-generation tutorial's one-step model
(``Embedding -> GRU(return_state) -> Dense(vocabulary)``, the GRU's state carried from call
to call, the next id drawn from the logits divided by a temperature), called ``--calls``
times in a Python loop at batch 1. Per-call time (median and mean) and the first call
(trace + compile) of:

- minikeras: ``examples/text_generation.py``'s ``CharModel`` and ``OneStep`` (its
  ``generate_one_step`` is an ``mk.function``; ``mk.random.categorical``), fed back as the
  example's ``generate`` does (``mk.reshape(mk.cast(next_id, 'int32'), (1, 1))``);
- TensorFlow: the tutorial's model with Keras layers and its ``@tf.function``
  ``generate_one_step``, fed back the same way, in a process of its own that imports no
  minikeras (``--tf-python``; JSON back);
- the floor: a hand-written ``jax.jit`` step (a GRU cell in ``jax.numpy``, the draw and the
  reshape for the next call inside the program). This is not the tutorial's loop, which
  casts and reshapes the drawn id eagerly between calls: an eager reshape is a second XLA
  execution chained between two calls of the program (in jax as in minikeras), and it costs
  far more than its dispatch, as it waits for the program and the next call waits for it. So
  the floor is a bound that no loop written as the tutorial's reaches;
- jax, eager feed-back: the same ``jax.jit`` step returning the drawn ids, fed back eagerly as
  the tutorial does (``jnp.reshape(next_id.astype(jnp.int32), (1, 1))``): the tutorial's loop
  written in jax, the fair reference for minikeras's row.

Every call is followed by reading the drawn id on the host (``.numpy()``), as a generator
that decodes each character does, so a call's time is the whole round trip. All of them run
the same weights (minikeras's initial ones, passed on), and the first step's logits are
compared across them.

    python benchmarks/generation.py                                  # the tutorial's sizes, 1,000 calls
    python benchmarks/generation.py --tf-python tfvenv/bin/python    # TensorFlow from another venv
    python benchmarks/generation.py --calls 20 --units 64 --embedding-dim 16   # a smoke run
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "text_generation.py")
DEFAULT_TF_PYTHON = os.environ.get("MINIKERAS_TF_PYTHON", "")  # a Python with TensorFlow, if not this one
START_ID = 1


def summary(first_s, per_call_s):
    """The figures each contender reports (seconds in, microseconds out)."""
    return {"first_call_s": first_s, "median_us": 1e6 * statistics.median(per_call_s),
            "mean_us": 1e6 * statistics.fmean(per_call_s), "calls": len(per_call_s)}


def time_loop(call, ids, states, calls):
    """Runs ``call(ids, states) -> (ids, states, host_id)`` once (the first call, timed alone),
    then ``calls`` times feeding each call's outputs to the next; returns (first seconds,
    per-call seconds, the drawn ids)."""
    start = time.perf_counter()
    ids, states, drawn = call(ids, states)
    first = time.perf_counter() - start
    times, out = [], [drawn]
    for _ in range(calls):
        start = time.perf_counter()
        ids, states, drawn = call(ids, states)
        times.append(time.perf_counter() - start)
        out.append(drawn)
    return first, times, out


# -- minikeras ------------------------------------------------------------------------------------
def load_example():
    spec = importlib.util.spec_from_file_location("text_generation_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_minikeras(args, weights_path):
    """Builds the example's model, saves its weights for the other contenders, times its OneStep."""
    import minikeras as mk
    example = load_example()
    mk.random.set_seed(0)
    vocabulary = example.Vocabulary("".join(chr(33 + i) for i in range(args.vocab - 1)))
    model = example.CharModel(len(vocabulary), args.embedding_dim, args.units)
    zeros = mk.zeros((1, args.units))
    start_ids = mk.constant(np.array([[START_ID]], "int32"))
    logits, _ = model(start_ids, states=zeros, return_state=True)
    np.savez(weights_path, *model.get_weights())
    one_step = example.OneStep(model, vocabulary, temperature=args.temperature)

    def call(ids, states):
        next_id, states = one_step.generate_one_step(ids, states)
        ids = mk.reshape(mk.cast(next_id, "int32"), (1, 1))  # as the example's generate feeds it back
        return ids, states, int(next_id.numpy()[0])

    first, times, drawn = time_loop(call, start_ids, zeros, args.calls)
    if args.profile:
        profile(call, start_ids, zeros, args.profile)
    return {**summary(first, times), "logits": np.asarray(logits.numpy())[0, -1].tolist(), "drawn": drawn[:10]}


def profile(call, ids, states, calls):
    """cProfile over ``calls`` more calls (the host work around the compiled program)."""
    import cProfile
    import pstats
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        ids, states, _ = call(ids, states)
    profiler.disable()
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(25)


# -- hand-written jax -----------------------------------------------------------------------------
def run_jax(args, weights, eager_feedback=False):
    """The floor: the same model as one jitted function of (params, ids, state, key); with
    ``eager_feedback`` the program returns the drawn ids (batch,) and the loop casts and reshapes
    them eagerly, as the tutorial's loop does."""
    import jax
    import jax.numpy as jnp

    embedding, kernel, recurrent, bias, dense_w, dense_b = [jnp.asarray(w) for w in weights]
    params = (embedding, kernel, recurrent, bias, dense_w, dense_b)
    mask = jnp.zeros((1, args.vocab), jnp.float32).at[0, 0].set(-jnp.inf)  # never draw '[UNK]'

    def logits_and_state(params, ids, h):
        embedding, kernel, recurrent, bias, dense_w, dense_b = params
        x = embedding[ids[:, -1]]
        xz, xr, xh = jnp.split(x @ kernel + bias[0], 3, axis=-1)  # Keras's reset_after GRU, gates z, r, h
        rz, rr, rh = jnp.split(h @ recurrent + bias[1], 3, axis=-1)
        z, r = jax.nn.sigmoid(xz + rz), jax.nn.sigmoid(xr + rr)
        h = z * h + (1 - z) * jnp.tanh(xh + r * rh)
        return h @ dense_w + dense_b, h

    @jax.jit
    def step(params, ids, h, key):
        logits, h = logits_and_state(params, ids, h)
        key, sub = jax.random.split(key)
        next_id = jax.random.categorical(sub, logits / args.temperature + mask, axis=-1)
        if eager_feedback:
            return next_id, h, key
        return next_id.astype(jnp.int32).reshape(1, 1), h, key

    key = [jax.random.key(0)]

    def call(ids, h):
        if eager_feedback:
            next_id, h, key[0] = step(params, ids, h, key[0])
            ids = jnp.reshape(next_id.astype(jnp.int32), (1, 1))
            return ids, h, int(np.asarray(next_id)[0])
        ids, h, key[0] = step(params, ids, h, key[0])
        return ids, h, int(np.asarray(ids)[0, 0])

    start_ids = jnp.array([[START_ID]], jnp.int32)
    zeros = jnp.zeros((1, args.units), jnp.float32)
    logits = jax.jit(logits_and_state)(params, start_ids, zeros)[0]
    first, times, drawn = time_loop(call, start_ids, zeros, args.calls)
    return {**summary(first, times), "logits": np.asarray(logits)[0].tolist(), "drawn": drawn[:10]}


# -- TensorFlow (in its own process) --------------------------------------------------------------
def run_tensorflow(args, weights):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.random.set_seed(0)

    class MyModel(tf.keras.Model):  # the tutorial's
        def __init__(self, vocab_size, embedding_dim, rnn_units):
            super().__init__()
            self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_dim)
            self.gru = tf.keras.layers.GRU(rnn_units, return_sequences=True, return_state=True)
            self.dense = tf.keras.layers.Dense(vocab_size)

        def call(self, inputs, states=None, return_state=False, training=False):
            x = self.embedding(inputs, training=training)
            if states is None:
                states = self.gru.get_initial_state(x)
            x, states = self.gru(x, initial_state=states, training=training)
            x = self.dense(x, training=training)
            return (x, states) if return_state else x

    class OneStep(tf.keras.Model):  # the tutorial's, on ids (its StringLookup layers left out)
        def __init__(self, model, temperature):
            super().__init__()
            self.model, self.temperature = model, temperature
            self.prediction_mask = tf.constant(np.where(np.arange(args.vocab) == 0, -np.inf, 0.0)[None, :],
                                               tf.float32)

        @tf.function
        def generate_one_step(self, input_ids, states):
            logits, states = self.model(inputs=input_ids, states=states, return_state=True)
            logits = logits[:, -1, :] / self.temperature + self.prediction_mask
            return tf.squeeze(tf.random.categorical(logits, num_samples=1), axis=-1), states

    model = MyModel(args.vocab, args.embedding_dim, args.units)
    start_ids = tf.constant([[START_ID]], tf.int32)
    zeros = tf.zeros((1, args.units))
    model(start_ids, states=zeros, return_state=True)
    model.set_weights(weights)
    logits, _ = model(start_ids, states=zeros, return_state=True)
    one_step = OneStep(model, args.temperature)

    def call(ids, states):
        next_id, states = one_step.generate_one_step(ids, states)
        ids = tf.reshape(tf.cast(next_id, tf.int32), (1, 1))
        return ids, states, int(next_id.numpy()[0])

    first, times, drawn = time_loop(call, start_ids, zeros, args.calls)
    return {**summary(first, times), "logits": logits.numpy()[0, -1].tolist(), "drawn": drawn[:10]}


def load_weights(path):
    with np.load(path) as saved:
        return [saved[f"arr_{i}"] for i in range(len(saved.files))]


def child_command(args, python, who, weights_path):
    return [python, os.path.abspath(__file__), "--child", who, "--weights", weights_path, "--calls", str(args.calls),
            "--vocab", str(args.vocab), "--embedding-dim", str(args.embedding_dim), "--units", str(args.units),
            "--temperature", str(args.temperature), "--profile", str(args.profile)]


def run_child(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.stderr.strip() and "--profile" in command and command[command.index("--profile") + 1] != "0":
        print(done.stderr, file=sys.stderr)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per contender")
    parser.add_argument("--vocab", type=int, default=66, help="vocabulary size, '[UNK]' included (the tutorial's 66)")
    parser.add_argument("--embedding-dim", type=int, default=256)
    parser.add_argument("--units", type=int, default=1024)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--tf-python", default=None,
                        help="a Python with TensorFlow (default: $MINIKERAS_TF_PYTHON, else this interpreter)")
    parser.add_argument("--no-tf", action="store_true")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also print cProfile's view of N more minikeras calls (stderr)")
    parser.add_argument("--child", choices=("mk", "jax", "jax-eager", "tf"), help=argparse.SUPPRESS)
    parser.add_argument("--weights", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child == "mk":
        print(json.dumps(run_minikeras(args, args.weights)))
        return None
    if args.child in ("jax", "jax-eager"):
        print(json.dumps(run_jax(args, load_weights(args.weights), eager_feedback=args.child == "jax-eager")))
        return None
    if args.child:
        print(json.dumps(run_tensorflow(args, load_weights(args.weights))))
        return None

    sys.path.insert(0, HERE)
    from common import CpuSteal, cpu_model
    tf_python = args.tf_python or DEFAULT_TF_PYTHON or sys.executable
    rows = {}
    with tempfile.TemporaryDirectory() as folder, CpuSteal() as steal:
        weights_path = os.path.join(folder, "weights.npz")
        # each contender in a process of its own; minikeras first, as it makes the weights
        rows["minikeras mk.function"] = run_child(child_command(args, sys.executable, "mk", weights_path))
        if "error" in rows["minikeras mk.function"]:
            print(f"minikeras failed: {rows['minikeras mk.function']['error']}")
            return rows
        rows["jax.jit (floor)"] = run_child(child_command(args, sys.executable, "jax", weights_path))
        rows["jax.jit, eager feed-back"] = run_child(child_command(args, sys.executable, "jax-eager", weights_path))
        if not args.no_tf:
            rows["TensorFlow @tf.function"] = run_child(child_command(args, tf_python, "tf", weights_path))
    print(f"{cpu_model()}; {steal.describe()}")
    print(f"one-step GRU({args.units}) generator, Embedding({args.vocab}, {args.embedding_dim}), batch 1, "
          f"{args.calls} calls, each followed by reading the drawn id")
    jax_median = rows["jax.jit (floor)"].get("median_us")
    tf_median = rows.get("TensorFlow @tf.function", {}).get("median_us")
    print(f"  {'contender':26s} {'median µs':>10s} {'mean µs':>9s} {'first call s':>12s} {'vs jax':>7s} {'vs TF':>6s}")
    reference = np.asarray(rows["minikeras mk.function"]["logits"])
    for name, row in rows.items():
        if "error" in row:
            print(f"  {name:26s} unavailable: {row['error']}")
            continue
        vs_jax = f"{jax_median / row['median_us']:7.2f}" if jax_median else "      -"
        vs_tf = f"{tf_median / row['median_us']:6.2f}" if tf_median else "     -"
        print(f"  {name:26s} {row['median_us']:10.0f} {row['mean_us']:9.0f} {row['first_call_s']:12.2f} "
              f"{vs_jax} {vs_tf}")
    print("  (vs: the other's median time per call over this one's; above 1 is faster)")
    for name, row in rows.items():
        if "logits" in row and name != "minikeras mk.function":
            difference = float(np.max(np.abs(np.asarray(row["logits"]) - reference)))
            print(f"  first step's logits, {name} against minikeras: max |difference| {difference:.2e}")
    return rows


if __name__ == "__main__":
    main()

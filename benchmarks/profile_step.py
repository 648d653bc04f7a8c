"""Where the compiled training step's time goes: XLA:CPU's own per-operation trace.

Runs the ``mk.function`` tape step of ``train_step.py`` (classic or simple MNIST CNN, batch
128; ResNet-20; or ``rnn_step.py``'s LSTM(128) / GRU(128) classifier on ``--length`` steps of 32
features), then records ``--steps`` steps with ``jax.profiler`` while XLA:CPU emits a trace event per
executed operation (``--xla_cpu_enable_xprof_traceme``), and prints the CPU milliseconds per
step of each operation, summed over the threads that ran it, largest first, with its share.

Convolutions that XLA:CPU hands to Eigen run inside Eigen's thread pool without such events,
so they are not in the table: their time is the step's wall time minus the rest, and
``benchmarks/conv.py`` times each of them alone. minikeras' native kernels show as
``ffi_call.N`` with the wall time of the call on the calling thread (their pool tasks on the
other thread are not traced).

    python benchmarks/profile_step.py                  # classic CNN, top 30
    python benchmarks/profile_step.py --model simple --top 50
    python benchmarks/profile_step.py --model lstm --batch-size 64 --length 100
    python benchmarks/profile_step.py --model resnet50 --batch-size 16 --size 224 --steps 2
    python benchmarks/profile_step.py --model resnet50 --batch-size 32 --predict --steps 2

``--predict`` profiles ``model.predict_on_batch`` (inference, no gradient) instead of the
training step.

In a recurrent model's table, an operation inside the loop over time (``while.N``'s body) is
listed with its time summed over all the steps, and the ``while.N`` line itself is the whole
loop's time including them (so the shares add up to more than 100%).

``--model vit`` and ``--model gpt`` profile ``fit`` on ``keras_io_models.py``'s keras.io Vision
Transformer and miniature GPT (example sizes; defaults: batch 64 and 32), one epoch of
``--steps`` batches per traced ``fit``, as ``keras_io_step.py`` times them:

    python benchmarks/profile_step.py --model vit --steps 2
"""
import argparse
import collections
import glob
import gzip
import json
import os
import sys
import tempfile
import time

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_enable_xprof_traceme=true").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras_io_models  # noqa: E402
import train_step  # noqa: E402
from common import block  # noqa: E402
from resnet20_model import resnet20  # noqa: E402

import minikeras as mk  # noqa: E402

# the executor's own spans, which contain the operations' spans
_CONTAINERS = ("ThunkExecutor::Execute", "ThunkExecutor::Execute (wait for completion)")


def operation_times(trace_dir, steps):
    """{operation name: CPU ms per step} from the newest trace under ``trace_dir``."""
    newest = max(glob.glob(os.path.join(trace_dir, "**", "*.trace.json.gz"), recursive=True), key=os.path.getmtime)
    with gzip.open(newest) as stream:
        events = json.load(stream)
    events = events["traceEvents"] if isinstance(events, dict) else events
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    totals = collections.Counter()
    for event in events:
        if event.get("ph") != "X" or event["name"] in _CONTAINERS:
            continue
        if not threads.get((event["pid"], event["tid"]), "").startswith("tf_XLA"):
            continue  # Python frames and the profiler's own
        totals[event["name"]] += event["dur"] / 1e3 / steps
    return totals


def recurrent(layer, length):
    """``rnn_step.py``'s model: ``layer(128)`` on (length, 32) sequences, then Dense(10, softmax)."""
    return mk.Sequential([mk.Input((length, 32)), layer(128), mk.layers.Dense(10, activation="softmax")])


def keras_io_fit(kind, batch_size, steps):
    """A function running one ``fit`` epoch of ``steps`` batches of ``keras_io_models``' ``kind``
    model (its last batch's loss is read back, so the call blocks until the step is done)."""
    model, x, y = keras_io_models.build(kind, mk.keras, batch_size, steps)

    def run():
        return model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=False).history["loss"]

    return run


def profile_keras_io(args):
    """``--model vit|gpt``: the table for ``fit``, one traced epoch of ``--steps`` batches."""
    batch_size = args.batch_size or {"vit": 64, "gpt": 32}[args.model]
    run = keras_io_fit(args.model, batch_size, args.steps)
    run()
    run()
    start = time.perf_counter()
    run()
    wall_ms = (time.perf_counter() - start) / args.steps * 1e3
    with tempfile.TemporaryDirectory() as trace_dir:
        jax.profiler.start_trace(trace_dir, create_perfetto_trace=True)
        run()
        jax.profiler.stop_trace()
        totals = operation_times(trace_dir, args.steps)
    print_table(f"{args.model}, batch {batch_size}, fit", wall_ms, totals, args.top)


def print_table(title, wall_ms, totals, top):
    """Prints the operations' CPU ms per step, largest first, then the same summed by kind."""
    traced = sum(totals.values())
    print(f"{title}: {wall_ms:.1f} ms per step (wall, untraced), "
          f"{os.cpu_count()} CPUs; "
          f"traced operations: {traced:.1f} CPU ms per step; the rest is Eigen's convolutions and waiting")
    print(f"{'CPU ms':>7} {'share':>6}  operation (XLA fusion name)")
    for name, ms in totals.most_common(top):
        print(f"{ms:7.2f} {ms / traced:6.1%}  {name}")
    kinds = collections.Counter()
    for name, ms in totals.items():
        kinds[name.rsplit(".", 1)[0] if name.rsplit(".", 1)[-1].isdigit() else name] += ms
    print(f"\nby kind (the fusion name without its number):\n{'CPU ms':>7} {'share':>6}  kind")
    for name, ms in kinds.most_common(top):
        print(f"{ms:7.2f} {ms / traced:6.1%}  {name}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["classic", "simple", "resnet", "lstm", "gru", "mobilenet", "resnet50",
                                            "vit", "gpt"],
                        default="classic")
    parser.add_argument("--batch-size", type=int, default=None, help="default 128 (vit: 64, gpt: 32)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--length", type=int, default=100, help="lstm and gru: the sequence length")
    parser.add_argument("--size", type=int, default=224, help="mobilenet, resnet50: the input's height and width")
    parser.add_argument("--predict", action="store_true", help="profile predict_on_batch, not the training step")
    parser.add_argument("--policy", default=None, help="a dtype policy for the MNIST models (mixed_bfloat16)")
    args = parser.parse_args(argv)
    if args.model in ("vit", "gpt"):
        return profile_keras_io(args)
    args.batch_size = args.batch_size or 128
    mk.random.set_seed(0)
    builders = {"classic": lambda: train_step.classic_cnn(args.policy),
                "simple": lambda: train_step.simple_cnn(args.policy), "resnet": lambda: resnet20(mk),
                "lstm": lambda: recurrent(mk.layers.LSTM, args.length),
                "gru": lambda: recurrent(mk.layers.GRU, args.length),
                "mobilenet": lambda: mk.applications.MobileNetV2(weights=None, input_shape=(args.size, args.size, 3)),
                "resnet50": lambda: mk.applications.ResNet50(weights=None, input_shape=(args.size, args.size, 3))}
    model = builders[args.model]()
    if args.predict:
        def step(images, labels):
            return model.predict_on_batch(images)
    else:
        step = train_step.mk_tape_step(model)
    sequence = (args.length, 32)
    image_shape = {"resnet": (32, 32, 3), "lstm": sequence, "gru": sequence,
                   "mobilenet": (args.size, args.size, 3),
                   "resnet50": (args.size, args.size, 3)}.get(args.model, (28, 28, 1))
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.random((args.batch_size, *image_shape), dtype=np.float32))
    y = jnp.asarray(rng.integers(0, 10, args.batch_size).astype(np.int32))
    for _ in range(2 if args.model in ("mobilenet", "resnet50") else 5):
        block(step(x, y))
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step(x, y)
    block(loss)
    wall_ms = (time.perf_counter() - start) / args.steps * 1e3
    with tempfile.TemporaryDirectory() as trace_dir:
        jax.profiler.start_trace(trace_dir, create_perfetto_trace=True)
        for _ in range(args.steps):
            loss = step(x, y)
        block(loss)
        jax.profiler.stop_trace()
        totals = operation_times(trace_dir, args.steps)
    mode = ", predict_on_batch" if args.predict else ""
    print_table(f"{args.model}, batch {args.batch_size}{mode}", wall_ms, totals, args.top)


if __name__ == "__main__":
    main()

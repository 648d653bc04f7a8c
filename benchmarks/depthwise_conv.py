"""Depthwise convolution on XLA:CPU: the grouped convolution against minikeras' 'taps' formulation.

For each of MobileNetV2's depthwise layers at 224x224 (3x3, 'same', stride 1 or 2) it times, in
interleaved rounds in one process, compiled with ``xla_cpu.jit`` as minikeras' programs are:
  * fwd: the forward pass, batch ``--predict-batch`` (MobileNetV2's predict batch, 32);
  * step: forward, input gradient and filter gradient together, batch ``--train-batch`` (16);
  * with ``--parts``, the input and filter gradients alone;
old = ``lax.conv_general_dilated(..., feature_group_count=channels)`` and its ``jax.vjp``
(``method="xla"``), new = ``minikeras.xla_cpu.depthwise``'s 'taps'. It prints medians in ms
and old / new (above 1: taps is faster). Compare ratios only (the machine may be shared).
``--eager`` compiles with plain ``jax.jit`` instead (YNNPACK's convolutions: eager ops).

    python benchmarks/depthwise_conv.py
    python benchmarks/depthwise_conv.py --predict-batch 8 --train-batch 4 --rounds 3   # a loaded machine
    python benchmarks/depthwise_conv.py --quick     # two small shapes, one round: checks it runs
    python benchmarks/depthwise_conv.py --mobilenet # the whole model, old against new (below)

``--mobilenet`` times MobileNetV2 (random weights, ``--size`` input) itself: ``predict_on_batch``
at ``--predict-batch`` and ``train_on_batch`` (SGD with momentum) at ``--train-batch``, two
models built and compiled in this process, one with ``tuning.DEPTHWISE_TAPS`` off (traced with
the grouped convolution) and one with it on, timed in interleaved rounds.
"""
import argparse
import os
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import block, cpu_model, honour_default_malloc_flag, interleaved  # noqa: E402

honour_default_malloc_flag()  # before minikeras is imported
from minikeras.xla_cpu import depthwise, jit, tuning  # noqa: E402

# name, input height = width, channels, stride: MobileNetV2's depthwise layers at 224x224
SHAPES = [
    ("expanded_conv 112x112x32", 112, 32, 1),
    ("block_1 112x112x96 s2", 112, 96, 2),
    ("block_2 56x56x144", 56, 144, 1),
    ("block_3 56x56x144 s2", 56, 144, 2),
    ("block_4 28x28x192", 28, 192, 1),
    ("block_6 28x28x192 s2", 28, 192, 2),
    ("block_7 14x14x384", 14, 384, 1),
    ("block_11 14x14x576", 14, 576, 1),
    ("block_13 14x14x576 s2", 14, 576, 2),
    ("block_14 7x7x960", 7, 960, 1),
]


def programs(size, channels, stride, batch, method, compile_with, parts):
    """{kind: a no-argument callable that runs it and blocks} for one shape and method."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, size, size, channels), np.float32)
    w = rng.standard_normal((3, 3, channels, 1), np.float32)
    s = (stride, stride)
    conv = {"strides": s, "padding": "SAME", "dilations": (1, 1), "method": method}
    dy = np.asarray(depthwise.depthwise_forward(x, w, **conv))
    forward = compile_with(lambda x, w: depthwise.depthwise_forward(x, w, **conv))
    input_grad = compile_with(lambda dy, w: depthwise.depthwise_input_grad(dy, w, x.shape, **conv))
    filter_grad = compile_with(lambda x, dy: depthwise.depthwise_filter_grad(x, dy, w.shape, **conv))
    step = compile_with(lambda x, w, dy: (depthwise.depthwise_forward(x, w, **conv),
                                          depthwise.depthwise_input_grad(dy, w, x.shape, **conv),
                                          depthwise.depthwise_filter_grad(x, dy, w.shape, **conv)))
    runs = {"step": lambda: block(step(x, w, dy))}
    if parts:
        runs["input_grad"] = lambda: block(input_grad(dy, w))
        runs["filter_grad"] = lambda: block(filter_grad(x, dy))
    return forward, x, w, runs


def mobilenet(size, predict_batch, train_batch, rounds):
    """Prints MobileNetV2's predict and train-step times with the grouped convolution and with taps."""
    import minikeras as mk

    rng = np.random.default_rng(0)
    xp = rng.uniform(-1, 1, (predict_batch, size, size, 3)).astype(np.float32)
    xt = rng.uniform(-1, 1, (train_batch, size, size, 3)).astype(np.float32)
    yt = rng.integers(0, 1000, (train_batch,)).astype(np.int32)
    runs = {}
    for taps, label in ((False, "old"), (True, "new")):
        tuning.DEPTHWISE_TAPS = taps  # read while the programs are traced, on the first calls below
        model = mk.applications.MobileNetV2(weights=None, input_shape=(size, size, 3))
        model.compile(optimizer=mk.keras.optimizers.SGD(0.01, momentum=0.9), loss="sparse_categorical_crossentropy")
        start = time.perf_counter()
        model.predict_on_batch(xp)
        first_predict = time.perf_counter() - start
        start = time.perf_counter()
        model.train_on_batch(xt, yt)
        print(f"{label}: first calls (compile included) predict {first_predict:.1f} s, "
              f"train {time.perf_counter() - start:.1f} s", flush=True)
        runs[("predict", label)] = lambda m=model: np.asarray(m.predict_on_batch(xp))
        runs[("train", label)] = lambda m=model: m.train_on_batch(xt, yt)
    tuning.DEPTHWISE_TAPS = True
    times = interleaved(runs, repeats=rounds)
    print(f"MobileNetV2 {size}x{size}: {'phase':8s} {'batch':>5s} {'old ms':>9s} {'new ms':>9s} {'old/new':>8s}")
    for phase, batch in (("predict", predict_batch), ("train", train_batch)):
        old, new = times[(phase, "old")], times[(phase, "new")]
        print(f"MobileNetV2 {size}x{size}: {phase:8s} {batch:5d} {old * 1e3:9.1f} {new * 1e3:9.1f} {old / new:8.2f}",
              flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--predict-batch", type=int, default=32)
    parser.add_argument("--train-batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--parts", action="store_true", help="also the input and filter gradients alone")
    parser.add_argument("--eager", action="store_true", help="plain jax.jit (YNNPACK convolutions)")
    parser.add_argument("--quick", action="store_true", help="two small shapes, batch 2, one round")
    parser.add_argument("--mobilenet", action="store_true", help="the whole MobileNetV2, old against new")
    parser.add_argument("--size", type=int, default=224, help="--mobilenet's input size")
    parser.add_argument("--default-malloc", action="store_true", help="glibc's malloc as it is")
    args = parser.parse_args(argv)
    shapes = [(n, 16 if args.quick else h, c, s) for n, h, c, s in SHAPES if not args.quick or c in (32, 96)]
    if args.quick:
        args.predict_batch = args.train_batch = 2
        args.rounds = 1
    if args.mobilenet:
        print(f"{cpu_model()}; jax {jax.__version__}; median of {args.rounds} interleaved rounds; old = grouped "
              f"convolution, new = taps")
        mobilenet(32 if args.quick else args.size, args.predict_batch, args.train_batch, args.rounds)
        return
    compile_with = jax.jit if args.eager else jit
    print(f"{cpu_model()}; jax {jax.__version__}; {'jax.jit (YNNPACK)' if args.eager else 'xla_cpu.jit (Eigen)'}; "
          f"predict batch {args.predict_batch}, train batch {args.train_batch}; median of {args.rounds} "
          f"interleaved rounds; ms, old = grouped convolution, new = taps")
    print(f"{'layer':28s} {'kind':12s} {'old ms':>9s} {'new ms':>9s} {'old/new':>8s}")
    for name, size, channels, stride in shapes:
        runs = {}
        for method, label in (("xla", "old"), ("taps", "new")):
            forward, x, w, kinds = programs(size, channels, stride, args.train_batch, method, compile_with,
                                            args.parts)
            xp = np.resize(x, (args.predict_batch,) + x.shape[1:])
            runs[("fwd", label)] = (lambda f=forward, xp=xp, w=w: block(f(xp, w)))
            runs.update({(kind, label): run for kind, run in kinds.items()})
        for run in runs.values():
            run()  # compile
        times = interleaved(runs, repeats=args.rounds)
        for kind in dict.fromkeys(k for k, _ in runs):
            old, new = times[(kind, "old")], times[(kind, "new")]
            print(f"{name:28s} {kind:12s} {old * 1e3:9.2f} {new * 1e3:9.2f} {old / new:8.2f}", flush=True)


if __name__ == "__main__":
    main()

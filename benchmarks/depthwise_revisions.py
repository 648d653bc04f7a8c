"""Depthwise convolutions: ``xla_cpu/depthwise.py`` at a git revision against the working tree.

For each of MobileNetV2's ten depthwise shapes at 224x224 (3x3 'same', batch ``--batch``) it
times, in interleaved rounds in one process, compiled with ``xla_cpu.jit`` as minikeras' programs
are, the input gradient (followed by a ReLU6 mask, as in the model) and the filter gradient of
the revision's module ("old") and of the working tree's ("new"), checks that both give the same
values, and prints medians in ms and old / new (above 1: the working tree is faster), with the
totals weighted by how many of MobileNetV2's layers have each shape. ``--mobilenet`` times
MobileNetV2's ``train_on_batch`` (SGD with momentum, random weights) with one and the other: two
models in this process, the first traced with the revision's functions in place of the working
tree's. Compare ratios only (the machine may be shared).

    python benchmarks/depthwise_revisions.py HEAD~1
    python benchmarks/depthwise_revisions.py HEAD~1 --mobilenet --batch 16 --rounds 5
    python benchmarks/depthwise_revisions.py HEAD --quick      # small shapes, one round: checks it runs
"""
import argparse
import os
import subprocess
import sys
import time
import types

import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import block, cpu_model, honour_default_malloc_flag, interleaved  # noqa: E402

honour_default_malloc_flag()  # before minikeras is imported
from minikeras.xla_cpu import depthwise, jit  # noqa: E402

# input height = width, channels, stride, how many of MobileNetV2's depthwise layers have it
LAYERS = [(112, 32, 1, 1), (112, 96, 2, 1), (56, 144, 1, 1), (56, 144, 2, 1), (28, 192, 1, 2), (28, 192, 2, 1),
          (14, 384, 1, 4), (14, 576, 1, 2), (14, 576, 2, 1), (7, 960, 1, 3)]
FUNCTIONS = ("depthwise_forward", "depthwise_input_grad", "depthwise_filter_grad")


def module_at(revision):
    """``minikeras/xla_cpu/depthwise.py`` as it was at ``revision``, loaded as a module of its own."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = subprocess.check_output(["git", "-C", root, "show", f"{revision}:minikeras/xla_cpu/depthwise.py"],
                                     text=True)
    module = types.ModuleType(f"depthwise_at_{revision}")
    exec(compile(source, f"depthwise.py@{revision}", "exec"), module.__dict__)  # noqa: S102 - our own file
    return module


def layer_runs(old, batch, quick):
    """{(shape, kind, 'old'|'new'): run} for every layer shape, after checking old and new agree."""
    runs = {}
    for size, channels, stride, _ in LAYERS:
        size = min(size, 16) if quick else size
        rng = np.random.default_rng(0)
        x = rng.standard_normal((batch, size, size, channels), np.float32)
        out = -(-size // stride)
        dy = rng.standard_normal((batch, out, out, channels), np.float32)
        w = rng.standard_normal((3, 3, channels, 1), np.float32)
        pre = rng.uniform(-2, 8, x.shape).astype(np.float32)  # a ReLU6's input: the mask of its gradient
        conv = ((stride, stride), "SAME", (1, 1))
        for label, module in (("old", old), ("new", depthwise)):
            input_grad = jit(lambda dy, w, pre, m=module, shape=x.shape, conv=conv: jnp.where(
                (pre > 0) & (pre < 6), m.depthwise_input_grad(dy, w, shape, *conv, method="taps"), 0.0))
            filter_grad = jit(lambda x, dy, m=module, conv=conv, w_shape=w.shape: m.depthwise_filter_grad(
                x, dy, w_shape, *conv, method="taps"))
            key = f"{size}x{size}x{channels} s{stride}"
            runs[(key, "input_grad", label)] = (lambda f=input_grad, a=(dy, w, pre): block(f(*a)),
                                                input_grad(dy, w, pre))
            runs[(key, "filter_grad", label)] = (lambda f=filter_grad, a=(x, dy): block(f(*a)), filter_grad(x, dy))
    for (key, kind, label), (_, value) in runs.items():
        if label == "new":
            expected = np.asarray(runs[(key, kind, "old")][1])
            error = np.abs(np.asarray(value) - expected).max() / max(np.abs(expected).max(), 1e-30)
            assert error < 1e-5, f"{key} {kind}: old and new differ by {error:.2e} (relative)"
    return {name: run for name, (run, _) in runs.items()}


def mobilenet_runs(old, batch, size):
    """{'old'|'new': MobileNetV2's train_on_batch}: the first model traced with the revision's functions."""
    import minikeras as mk

    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (batch, size, size, 3)).astype(np.float32)
    y = rng.integers(0, 1000, (batch,)).astype(np.int32)
    runs = {}
    for label in ("old", "new"):
        saved = {name: getattr(depthwise, name) for name in FUNCTIONS}
        if label == "old":  # the primitives call these by module attribute when the step is traced
            for name in FUNCTIONS:
                setattr(depthwise, name, getattr(old, name))
        try:
            mk.random.set_seed(0)
            model = mk.applications.MobileNetV2(weights=None, input_shape=(size, size, 3))
            model.compile(optimizer=mk.keras.optimizers.SGD(0.01, momentum=0.9),
                          loss="sparse_categorical_crossentropy")
            start = time.perf_counter()
            model.train_on_batch(x, y)
            print(f"{label}: first train_on_batch (compile included) {time.perf_counter() - start:.1f} s", flush=True)
        finally:
            for name, function in saved.items():
                setattr(depthwise, name, function)
        runs[label] = lambda m=model: m.train_on_batch(x, y)
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", help="the git revision whose depthwise.py is 'old'")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mobilenet", action="store_true", help="the whole MobileNetV2 train step instead")
    parser.add_argument("--size", type=int, default=224, help="--mobilenet's input size")
    parser.add_argument("--quick", action="store_true", help="16x16 layers (32x32 model), batch 2, one round")
    parser.add_argument("--default-malloc", action="store_true", help="glibc's malloc as it is")
    args = parser.parse_args(argv)
    if args.quick:
        args.batch, args.rounds, args.size = 2, 1, 32
    old = module_at(args.revision)
    print(f"{cpu_model()}; old = depthwise.py at {args.revision}, new = the working tree; batch {args.batch}; "
          f"median of {args.rounds} interleaved rounds")
    if args.mobilenet:
        times = interleaved(mobilenet_runs(old, args.batch, args.size), repeats=args.rounds)
        print(f"MobileNetV2 {args.size}x{args.size} train_on_batch: old {times['old'] * 1e3:.0f} ms, "
              f"new {times['new'] * 1e3:.0f} ms, old/new {times['old'] / times['new']:.3f}")
        return
    times = interleaved(layer_runs(old, args.batch, args.quick), repeats=args.rounds)
    totals = {}
    print(f"{'layer':20s} {'kind':12s} {'old ms':>9s} {'new ms':>9s} {'old/new':>8s}")
    for (size, channels, stride, count), key in zip(LAYERS, dict.fromkeys(k for k, _, _ in times)):
        for kind in ("input_grad", "filter_grad"):
            o, n = times[(key, kind, "old")], times[(key, kind, "new")]
            totals[kind] = [a + count * b for a, b in zip(totals.get(kind, (0.0, 0.0)), (o, n))]
            print(f"{key:20s} {kind:12s} {o * 1e3:9.2f} {n * 1e3:9.2f} {o / n:8.2f}", flush=True)
    for kind, (o, n) in totals.items():
        print(f"{'all, by layer count':20s} {kind:12s} {o * 1e3:9.2f} {n * 1e3:9.2f} {o / n:8.2f}")


if __name__ == "__main__":
    main()

"""Gradient checkpointing (``mk.recompute_grad``): the process's memory for activations, and the
step time, with and without.

The model is ``--blocks`` residual blocks ``h = relu(h @ w) + h`` (each ``w`` a
``--width`` x ``--width`` Variable), batch ``--batch``, loss ``mean(h ** 2)``; one training
step (tape, gradients of every ``w``, plain SGD) is one ``mk.function``. "recompute" wraps each
block in ``mk.recompute_grad``: the backward pass keeps only the blocks' inputs and recomputes
each block's inside when it reaches it.

Each variant runs in a fresh process of its own. After a first step (tracing and compiling,
whose own memory is not the step's), the process's peak resident set size is reset (Linux:
``/proc/self/clear_refs``), one step runs, and the peak is read back (``VmHWM``). The step's
memory is that peak minus the resident size just before the step (the weights, the batch, the
runtime); its activations are the step's memory minus the gradients (one array per weight,
alive at once before the update). Step time is the median of ``--repeats`` further steps.

What to expect: the plain step keeps two activations per block (its input, for the weight's
gradient, and the ReLU's output, for its mask), the recompute step one (its input) and a few
more while it runs a block's backward pass (the recomputed product, the cotangents, the fenced
copy of the input), so with every block checkpointed the ratio approaches 0.5 from above as
blocks are added: 24 blocks keep ~26 activations against ~49 (XLA's buffer assignment).

    python benchmarks/recompute.py [--blocks 24] [--width 1024] [--batch 2048] [--repeats 3]
    python benchmarks/recompute.py --quick      # small sizes, to check that it runs
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

VARIANTS = ("plain", "recompute")


def _status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def _reset_peak():
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # resets VmHWM to the current resident size (Linux 4.0+)


def _trim_heap():
    """Hands freed heap memory back to the OS (glibc), so that the step's peak is not hidden in
    pages the heap kept from the first step (``import minikeras`` asks glibc to keep them)."""
    import ctypes
    import ctypes.util
    ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)


def run_variant(variant, blocks, width, batch, repeats):
    """One variant in this process; returns its figures as a dict."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a checkout without installing
    import gc

    import numpy as np

    import minikeras as mk

    rng = np.random.default_rng(0)
    weights = [mk.Variable(rng.normal(size=(width, width)).astype(np.float32) * (0.5 / width ** 0.5),
                           name=f"w{i}") for i in range(blocks)]
    x = mk.constant(rng.normal(size=(batch, width)).astype(np.float32))

    def block_of(w):
        return lambda h: mk.nn.relu(mk.matmul(h, w)) + h

    wrap = mk.recompute_grad if variant == "recompute" else (lambda f: f)
    layers = [wrap(block_of(w)) for w in weights]
    optimizer = mk.optimizers.SGD(1e-3)

    @mk.function
    def step(x):
        with mk.GradientTape() as tape:
            h = x
            for layer in layers:
                h = layer(h)
            loss = mk.reduce_mean(h ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))
        return loss

    first_loss = float(step(x).numpy())  # traces and compiles
    gc.collect()
    _trim_heap()
    before = _status_kib("VmRSS")
    _reset_peak()
    float(step(x).numpy())
    peak = _status_kib("VmHWM")
    process_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB; compilation included
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        float(step(x).numpy())
        times.append(time.perf_counter() - start)
    step_bytes = (peak - before) * 1024
    gradient_bytes = blocks * width * width * 4
    return {"variant": variant, "first_loss": first_loss, "process_peak": process_peak * 1024,
            "rss_before": before * 1024, "step_peak": peak * 1024, "step_bytes": step_bytes,
            "gradient_bytes": gradient_bytes,
            "activation_bytes": step_bytes - gradient_bytes, "seconds": statistics.median(times)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=24)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="8 blocks of 256, batch 512, 1 repeat")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args(argv)
    if args.quick:
        args.blocks, args.width, args.batch, args.repeats = 8, 256, 512, 1
    sizes = (args.blocks, args.width, args.batch, args.repeats)
    if args.variant:
        print(json.dumps(run_variant(args.variant, *sizes)))
        return None
    if not os.path.exists("/proc/self/clear_refs"):
        sys.exit("benchmarks/recompute.py measures peak RSS through Linux's /proc/self/clear_refs")
    results = {}
    for variant in VARIANTS:
        command = [sys.executable, __file__, "--variant", variant, "--blocks", str(args.blocks),
                   "--width", str(args.width), "--batch", str(args.batch), "--repeats", str(args.repeats)]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results[variant] = json.loads(out.strip().splitlines()[-1])
    plain, recompute = results["plain"], results["recompute"]
    # both start from the same weights, so their first losses agree
    assert abs(plain["first_loss"] - recompute["first_loss"]) <= 1e-4 * max(1.0, abs(plain["first_loss"])), results
    mib = 2 ** 20
    print(f"{args.blocks} blocks relu(h @ w) + h, w {args.width}x{args.width}, batch {args.batch}, "
          f"one mk.function training step; each variant in a fresh process")
    print(f"weights {plain['gradient_bytes'] / mib:.0f} MiB, gradients {plain['gradient_bytes'] / mib:.0f} MiB, "
          f"one activation {args.batch * args.width * 4 / mib:.0f} MiB")
    print(f"{'':11s}{'RSS before':>12s}{'step peak':>12s}{'step':>10s}{'activations':>13s}{'step time':>11s}")
    for name, r in results.items():
        print(f"{name:11s}{r['rss_before'] / mib:8.0f} MiB{r['step_peak'] / mib:8.0f} MiB"
              f"{r['step_bytes'] / mib:6.0f} MiB{r['activation_bytes'] / mib:9.0f} MiB{r['seconds'] * 1e3:8.0f} ms")
    print(f"process peak RSS (compilation included): plain {plain['process_peak'] / mib:.0f} MiB, "
          f"recompute {recompute['process_peak'] / mib:.0f} MiB")
    ratio = recompute["activation_bytes"] / plain["activation_bytes"]
    print(f"recompute / plain: activations {ratio:.2f}x (target <= 0.5x), "
          f"step time {recompute['seconds'] / plain['seconds']:.2f}x")
    return results


if __name__ == "__main__":
    main()

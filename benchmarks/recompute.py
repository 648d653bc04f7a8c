"""Gradient checkpointing (``mk.recompute_grad``): the process's memory for activations, and the
step time, with and without.

The model is ``--blocks`` residual blocks ``h = relu(h @ w) + h`` (each ``w`` a
``--width`` x ``--width`` Variable), batch ``--batch``, loss ``mean(h ** 2)``; one training
step (tape, gradients of every ``w``, plain SGD) is one ``mk.function``. Three variants:

- "plain": no checkpointing;
- "per-block": each block wrapped in ``mk.recompute_grad``: the backward pass keeps only the
  blocks' inputs and recomputes each block's inside when it reaches it;
- "segments": ``mk.recompute_grad`` around each run of ``--segment`` consecutive blocks (default
  ``round(sqrt(blocks))``), the usual practice for deep stacks: only the segments' inputs are
  kept, and one segment's activations are alive at a time, while its backward pass runs.

The step also returns three scalars per weight (its gradient's squared norm, the gradient's dot
product with the weight, the weight's squared norm), and the script asserts that every
variant's gradients agree with plain's on them.

Each variant runs in a fresh process of its own. After a first step (tracing and compiling,
whose own memory is not the step's), the process's peak resident set size is reset (Linux:
``/proc/self/clear_refs``), one step runs, and the peak is read back (``VmHWM``). The step's
memory is that peak minus the resident size just before the step (the weights, the batch, the
runtime); its activations are the step's memory minus the gradients (one array per weight,
alive at once before the update). Step time is the median of ``--repeats`` further steps.

What to expect (XLA's buffer assignment, 24 blocks): the plain step keeps two activations per
block (its output, which is the next block's input, for the weight's gradient, and the product
``h @ w``, for the ReLU's mask): 49 in all. Per-block checkpointing keeps one per block (the 24
block outputs, the last one for the loss's gradient) and two more while it runs a block's
backward pass (the recomputed product, turned into its cotangent in place, and the input's
cotangent): 26, a floor of ~0.5x that no per-block scheme can pass, since the inputs it must
keep are themselves half of plain's activations. With segments of ``k`` blocks it keeps
``blocks / k`` segment inputs and one segment's ``2 k`` activations: ~15 for 24 blocks in
segments of 5, ~0.3x.

    python benchmarks/recompute.py [--blocks 24] [--width 1024] [--batch 2048] [--segment 5] [--repeats 3]
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

VARIANTS = ("plain", "per-block", "segments")


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


def run_variant(variant, blocks, width, batch, repeats, segment):
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

    def chain(fs):
        def run(h):
            for f in fs:
                h = f(h)
            return h
        return run

    plain = [block_of(w) for w in weights]
    if variant == "plain":
        layers = plain
    elif variant == "per-block":
        layers = [mk.recompute_grad(f) for f in plain]
    else:
        layers = [mk.recompute_grad(chain(plain[i:i + segment])) for i in range(0, blocks, segment)]
    optimizer = mk.optimizers.SGD(1e-3)

    @mk.function
    def step(x):
        with mk.GradientTape() as tape:
            h = x
            for layer in layers:
                h = layer(h)
            loss = mk.reduce_mean(h ** 2)
        grads = tape.gradient(loss, weights)
        # three scalars per weight, to check the gradients against plain's without keeping them
        check = mk.stack([mk.stack([mk.reduce_sum(g * g), mk.reduce_sum(g * w), mk.reduce_sum(w * w)])
                          for g, w in zip(grads, weights)])
        optimizer.apply_gradients(zip(grads, weights))
        return loss, check

    first_loss, check = step(x)  # traces and compiles
    first_loss, check = float(first_loss.numpy()), check.numpy().tolist()
    gc.collect()
    _trim_heap()
    before = _status_kib("VmRSS")
    _reset_peak()
    float(step(x)[0].numpy())
    peak = _status_kib("VmHWM")
    process_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB; compilation included
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        float(step(x)[0].numpy())
        times.append(time.perf_counter() - start)
    step_bytes = (peak - before) * 1024
    gradient_bytes = blocks * width * width * 4
    return {"variant": variant, "first_loss": first_loss, "gradient_check": check, "process_peak": process_peak * 1024,
            "rss_before": before * 1024, "step_peak": peak * 1024, "step_bytes": step_bytes,
            "gradient_bytes": gradient_bytes,
            "activation_bytes": step_bytes - gradient_bytes, "seconds": statistics.median(times)}


def check_gradients(name, result, plain):
    """Asserts that variant ``name`` had plain's first loss and gradients (all variants start from
    the same weights): per weight, the gradient's squared norm and its dot product with the weight."""
    assert abs(plain["first_loss"] - result["first_loss"]) <= 1e-4 * max(1.0, abs(plain["first_loss"])), (
        name, result["first_loss"], plain["first_loss"])
    for i, ((sq, dot, _), (want_sq, want_dot, w_sq)) in enumerate(zip(result["gradient_check"],
                                                                     plain["gradient_check"])):
        assert abs(sq - want_sq) <= 1e-3 * want_sq, (name, f"w{i}", "squared norm", sq, want_sq)
        assert abs(dot - want_dot) <= 1e-3 * (want_sq * w_sq) ** 0.5, (name, f"w{i}", "dot", dot, want_dot)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=24)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=2048)
    parser.add_argument("--segment", type=int, default=None,
                        help="blocks per recompute_grad segment (default: round(sqrt(blocks)))")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="8 blocks of 256, batch 512, 1 repeat")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args(argv)
    if args.quick:
        args.blocks, args.width, args.batch, args.repeats = 8, 256, 512, 1
    if args.segment is None:
        args.segment = max(1, round(args.blocks ** 0.5))
    if not 1 <= args.segment <= args.blocks:
        parser.error(f"--segment must be between 1 and --blocks ({args.blocks}), received {args.segment}")
    sizes = (args.blocks, args.width, args.batch, args.repeats, args.segment)
    if args.variant:
        print(json.dumps(run_variant(args.variant, *sizes)))
        return None
    if not os.path.exists("/proc/self/clear_refs"):
        sys.exit("benchmarks/recompute.py measures peak RSS through Linux's /proc/self/clear_refs")
    results = {}
    for variant in VARIANTS:
        command = [sys.executable, __file__, "--variant", variant, "--blocks", str(args.blocks),
                   "--width", str(args.width), "--batch", str(args.batch), "--repeats", str(args.repeats),
                   "--segment", str(args.segment)]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results[variant] = json.loads(out.strip().splitlines()[-1])
    plain = results["plain"]
    for name, r in results.items():
        check_gradients(name, r, plain)
    mib = 2 ** 20
    print(f"{args.blocks} blocks relu(h @ w) + h, w {args.width}x{args.width}, batch {args.batch}, "
          f"one mk.function training step; each variant in a fresh process; segments of {args.segment} blocks")
    print("gradients: every variant's agree with plain's (per weight: squared norm to 1e-3, dot product "
          "with the weight to 1e-3 of |g| |w|)")
    print(f"weights {plain['gradient_bytes'] / mib:.0f} MiB, gradients {plain['gradient_bytes'] / mib:.0f} MiB, "
          f"one activation {args.batch * args.width * 4 / mib:.0f} MiB")
    print(f"{'':11s}{'RSS before':>12s}{'step peak':>12s}{'step':>10s}{'activations':>13s}{'step time':>11s}")
    for name, r in results.items():
        print(f"{name:11s}{r['rss_before'] / mib:8.0f} MiB{r['step_peak'] / mib:8.0f} MiB"
              f"{r['step_bytes'] / mib:6.0f} MiB{r['activation_bytes'] / mib:9.0f} MiB{r['seconds'] * 1e3:8.0f} ms")
    print("process peak RSS (compilation included): " + ", ".join(
        f"{name} {r['process_peak'] / mib:.0f} MiB" for name, r in results.items()))
    for name in VARIANTS[1:]:
        r = results[name]
        print(f"{name} / plain: activations {r['activation_bytes'] / plain['activation_bytes']:.2f}x "
              f"(target <= 0.5x), process peak {r['process_peak'] / plain['process_peak']:.2f}x, "
              f"step time {r['seconds'] / plain['seconds']:.2f}x")
    return results


if __name__ == "__main__":
    main()

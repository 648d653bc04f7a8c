"""conv2d forward / input-gradient / filter-gradient: minikeras.xla_cpu.conv vs plain lax, on CPU.

Per shape (MNIST/CIFAR-style layers, the classic Keras MNIST CNN's two convolutions first) it
prints GFLOP/s of
  * ref: ``lax.conv_general_dilated`` and ``jax.vjp`` of it (what jax autodiff runs),
  * ours: ``conv2d_forward`` / ``conv2d_input_grad`` / ``conv2d_filter_grad`` (formulation
    picked by shape; the column ``via`` says which),
next to the GFLOP/s of a 2048^3 f32 matmul measured in the same run. Candidates are timed in
interleaved rounds and reported as medians; compare ratios within a run (the machine is shared).

    python benchmarks/conv.py            # all shapes
    python benchmarks/conv.py --quick    # the MNIST convs and two CIFAR ones, fewer rounds
    python benchmarks/conv.py --methods  # also every formulation of each of the three
    python benchmarks/conv.py --resnet50 --methods  # ResNet50's stride-1 layers instead
    python benchmarks/conv.py --step     # MNIST CNN train step (jit + optax.adam, batch 128):
                                         # lax conv vs xla_cpu.conv wired in with jax.custom_vjp
    --default-malloc                     # glibc's malloc as it is (see below)

glibc serves allocations over 32 MiB with fresh mmap'd pages, and XLA:CPU allocates a program's
temporaries as one block, so a program with more than 32 MiB of temporaries page-faults through
all of them on every call. ``import minikeras`` prevents that
(``minikeras.xla_cpu.host_memory.reuse_freed_host_memory``: mallopt M_MMAP_MAX=0,
M_TRIM_THRESHOLD=1 GiB, M_ARENA_MAX=1); ``--default-malloc`` (MINIKERAS_REUSE_HOST_MEMORY=0)
shows the cost.
"""
import argparse
import functools
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import DEFAULT_MALLOC_FLAG, CpuSteal, honour_default_malloc_flag  # noqa: E402  (this script's folder)

honour_default_malloc_flag()  # before minikeras is imported
from minikeras.xla_cpu import compiler, conv, conv_native, jit, pool  # noqa: E402
from minikeras.xla_cpu.dropout import dropout_mask  # noqa: E402

# name, batch, height, width, in channels, out channels, kernel, stride, padding
SHAPES = [
    ("mnist_conv1", 128, 28, 28, 1, 32, 3, 1, "VALID"),
    ("mnist_conv2", 128, 26, 26, 32, 64, 3, 1, "VALID"),
    ("rgb_32x32_same", 128, 32, 32, 3, 32, 3, 1, "SAME"),
    ("c32_32x32_same", 128, 32, 32, 32, 32, 3, 1, "SAME"),
    ("c32_64_s2_same", 128, 32, 32, 32, 64, 3, 2, "SAME"),
    ("c64_128_16x16_same", 128, 16, 16, 64, 128, 3, 1, "SAME"),
    ("c64_128_s2_valid", 128, 16, 16, 64, 128, 3, 2, "VALID"),
    ("c128_8x8_same", 128, 8, 8, 128, 128, 3, 1, "SAME"),
    ("gray_5x5_same", 128, 28, 28, 1, 32, 5, 1, "SAME"),
    ("c32_64_5x5_valid", 128, 14, 14, 32, 64, 5, 1, "VALID"),
    ("b32_c16_32_same", 32, 32, 32, 16, 32, 3, 1, "SAME"),
]
QUICK = ("mnist_conv1", "mnist_conv2", "c32_32x32_same", "c32_64_s2_same")
# ResNet50's stride-1 convolutions at 224x224 (``--resnet50``), batch 16 as its training step:
# each stage's 3x3 layer and its 1x1 layers (reduce, expand; the projection shortcuts and strided
# first 1x1 layers run as these on every second pixel)
RESNET50_SHAPES = [
    (f"r50_{hw}_{k}x{k}_{c}_{o}", 16, hw, hw, c, o, k, 1, "SAME")
    for hw, width in ((56, 64), (28, 128), (14, 256), (7, 512))
    for k, c, o in ((3, width, width), (1, width, 4 * width), (1, 4 * width, width))]


# -- timing ------------------------------------------------------------------------------------
def race(candidates, rounds=5, budget_s=0.15):
    """{name: (fn, args)} -> {name: median seconds per call}: jit, warm up, then interleaved rounds.

    Names ending in 'ref' (what a jax user writes) compile with ``jax.jit``, the others the way
    minikeras compiles its programs (``minikeras.xla_cpu.jit``: on CPU, convolutions on Eigen).
    Each round calls every candidate enough times to take about ``budget_s``, so that load
    from other processes hits all candidates alike.
    """
    jitted = {name: ((jax.jit if name.endswith("ref") else jit)(fn), args)
              for name, (fn, args) in candidates.items()}
    reps = {}
    for name, (fn, args) in jitted.items():
        jax.block_until_ready(fn(*args))
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        reps[name] = max(1, int(budget_s / max(time.perf_counter() - start, 1e-6)))
    times = {name: [] for name in jitted}
    for _ in range(rounds):
        for name, (fn, args) in jitted.items():
            start = time.perf_counter()
            for _ in range(reps[name]):
                out = fn(*args)
            jax.block_until_ready(out)
            times[name].append((time.perf_counter() - start) / reps[name])
    return {name: float(np.median(t)) for name, t in times.items()}


def gemm_gflops(n=2048, rounds=5):
    """GFLOP/s of one n x n x n f32 matmul, now."""
    a = jax.random.normal(jax.random.key(0), (n, n), jnp.float32)
    b = jax.random.normal(jax.random.key(1), (n, n), jnp.float32)
    return 2 * n ** 3 / race({"gemm": (lambda a, b: a @ b, (a, b))}, rounds=rounds)["gemm"] / 1e9


# -- per-shape table ---------------------------------------------------------------------------
def _reference(x, w, strides, padding):
    return lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=conv.DIMENSION_NUMBERS)


def shape_candidates(x, w, dy, strides, padding, methods):
    ref_dx = lambda dy, w: jax.vjp(lambda x_: _reference(x_, w, strides, padding), x)[1](dy)[0]
    ref_dw = lambda x, dy: jax.vjp(lambda w_: _reference(x, w_, strides, padding), w)[1](dy)[0]
    c = {
        "fwd ref": (lambda x, w: _reference(x, w, strides, padding), (x, w)),
        "fwd ours": (lambda x, w: conv.conv2d_forward(x, w, strides, padding), (x, w)),
        "dgrad ref": (ref_dx, (dy, w)),
        "dgrad ours": (lambda dy, w: conv.conv2d_input_grad(dy, w, x.shape, strides, padding), (dy, w)),
        "wgrad ref": (ref_dw, (x, dy)),
        "wgrad ours": (lambda x, dy: conv.conv2d_filter_grad(x, dy, w.shape, strides, padding), (x, dy)),
    }
    if methods:
        pads = conv.explicit_padding(padding, x.shape[1:3], w.shape[:2], strides)

        def takes(kind, m):  # the native kernels take only some shapes (and need a compiler)
            if m == "matmul":
                return conv.matmul_filter_grad_applies(x.shape, w.shape, strides, pads, (1, 1), x.dtype)
            return m != "native" or (conv_native.supported(kind, x.shape, w.shape, strides, pads, (1, 1), x.dtype)
                                     and conv_native.available())
        for m in conv.FORWARD_METHODS:
            if takes("forward", m):
                c[f"fwd {m}"] = (lambda x, w, m=m: conv.conv2d_forward(x, w, strides, padding, method=m), (x, w))
        for m in conv.INPUT_GRAD_METHODS:
            if takes("input_grad", m):
                c[f"dgrad {m}"] = (lambda dy, w, m=m: conv.conv2d_input_grad(
                    dy, w, x.shape, strides, padding, method=m), (dy, w))
        for m in conv.FILTER_GRAD_METHODS:
            if takes("filter_grad", m):
                c[f"wgrad {m}"] = (lambda x, dy, m=m: conv.conv2d_filter_grad(
                    x, dy, w.shape, strides, padding, method=m), (x, dy))
    return c


def run_shapes(names, rounds, methods):
    gemm = gemm_gflops(rounds=rounds)
    print(f"GEMM 2048^3 f32: {gemm:.0f} GFLOP/s (backend {jax.default_backend()}, "
          f"{os.cpu_count()} cpus)\n")
    header = f"{'shape':<20}{'pass':<7}{'ref GF/s':>9}{'ours GF/s':>10}{'speedup':>8}{'of GEMM':>8}  via"
    print(header)
    print("-" * len(header))
    for name, n, h, wd, c, o, k, s, padding in SHAPES + RESNET50_SHAPES:
        if name not in names:
            continue
        key = jax.random.key(hash(name) % 1000)
        x = jax.random.normal(key, (n, h, wd, c), jnp.float32)
        w = jax.random.normal(jax.random.fold_in(key, 1), (k, k, c, o), jnp.float32)
        y = _reference(x, w, (s, s), padding)
        dy = jax.random.normal(jax.random.fold_in(key, 2), y.shape, jnp.float32)
        flops = 2 * y.size * k * k * c
        t = race(shape_candidates(x, w, dy, (s, s), padding, methods), rounds=rounds)
        for kind in ("fwd", "dgrad", "wgrad"):
            via = conv.formulation({"fwd": "forward", "dgrad": "input_grad", "wgrad": "filter_grad"}[kind],
                                   x.shape, w.shape, (s, s), padding, eigen=compiler.cpu_options() is not None)
            others = "  ".join(f"{m.split()[1]}={flops / t[m] / 1e9:.0f}" for m in t
                               if m.startswith(kind + " ") and m.split()[1] not in ("ref", "ours"))
            ours = flops / t[kind + " ours"] / 1e9
            print(f"{name:<20}{kind:<7}{flops / t[kind + ' ref'] / 1e9:>9.1f}{ours:>10.1f}"
                  f"{t[kind + ' ref'] / t[kind + ' ours']:>7.1f}x{100 * ours / gemm:>7.0f}%  {via}"
                  + (f"   [{others}]" if others else ""))
        sys.stdout.flush()
    print(f"\nGEMM again: {gemm_gflops(rounds=rounds):.0f} GFLOP/s")


# -- the MNIST CNN training step ---------------------------------------------------------------
@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def fast_conv(x, w, strides, padding):
    return conv.conv2d_forward(x, w, strides, padding)


def _fast_conv_fwd(x, w, strides, padding):
    return conv.conv2d_forward(x, w, strides, padding), (x, w)


def _fast_conv_bwd(strides, padding, res, dy):
    x, w = res
    return (conv.conv2d_input_grad(dy, w, x.shape, strides, padding),
            conv.conv2d_filter_grad(x, dy, w.shape, strides, padding))


fast_conv.defvjp(_fast_conv_fwd, _fast_conv_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def fast_max_pool(x, ksize, strides, padding):
    return pool.max_pool2d_forward(x, ksize, strides, padding)


def _fast_max_pool_fwd(x, ksize, strides, padding):
    y = pool.max_pool2d_forward(x, ksize, strides, padding)
    return y, (x, y)


def _fast_max_pool_bwd(ksize, strides, padding, res, dy):
    x, y = res
    return (pool.max_pool2d_grad(x, dy, ksize, strides, padding, y=y),)


fast_max_pool.defvjp(_fast_max_pool_fwd, _fast_max_pool_bwd)

PLAIN = dict(
    conv=lambda x, w: _reference(x, w, (1, 1), "VALID"),
    pool=lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
    mask=lambda key, shape, rate: jax.random.bernoulli(key, 1.0 - rate, shape))
FAST = dict(
    conv=lambda x, w: fast_conv(x, w, (1, 1), "VALID"),
    pool=lambda x: fast_max_pool(x, (2, 2), (2, 2), "VALID"),
    mask=dropout_mask)


def init_params(key):
    k = jax.random.split(key, 4)
    glorot = jax.nn.initializers.glorot_uniform()
    return dict(w1=glorot(k[0], (3, 3, 1, 32)), b1=jnp.zeros(32), w2=glorot(k[1], (3, 3, 32, 64)), b2=jnp.zeros(64),
                w3=glorot(k[2], (9216, 128)), b3=jnp.zeros(128), w4=glorot(k[3], (128, 10)), b4=jnp.zeros(10))


def mnist_cnn(p, x, key, ops):
    """Conv2D(32) -> Conv2D(64) -> MaxPool -> Dropout(.25) -> Flatten -> Dense(128) -> Dropout(.5) -> Dense(10)."""
    def dropout(h, key, rate):
        return jnp.where(ops["mask"](key, h.shape, rate), h / (1.0 - rate), 0.0)
    k1, k2 = jax.random.split(key)
    h = jax.nn.relu(ops["conv"](x, p["w1"]) + p["b1"])
    h = jax.nn.relu(ops["conv"](h, p["w2"]) + p["b2"])
    h = dropout(ops["pool"](h), k1, 0.25).reshape(x.shape[0], -1)
    h = dropout(jax.nn.relu(h @ p["w3"] + p["b3"]), k2, 0.5)
    return h @ p["w4"] + p["b4"]


def make_step(ops):
    import optax
    opt = optax.adam(1e-3)

    def step(p, s, x, y, key):
        def loss(p):
            return optax.softmax_cross_entropy_with_integer_labels(mnist_cnn(p, x, key, ops), y).mean()
        value, grads = jax.value_and_grad(loss)(p)
        updates, s = opt.update(grads, s, p)
        return optax.apply_updates(p, updates), s, value
    return step, opt


def run_step(rounds, batch=128):
    variants = {"jax (lax.conv, reduce_window, bernoulli)": PLAIN,
                "xla_cpu conv only": dict(PLAIN, conv=FAST["conv"]),
                "xla_cpu conv + pool + dropout": FAST}
    p = init_params(jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (batch, 28, 28, 1), jnp.float32)
    y = jax.random.randint(jax.random.key(2), (batch,), 0, 10)
    key = jax.random.key(3)
    candidates, losses = {}, {}
    for name, ops in variants.items():
        step, opt = make_step(ops)
        candidates[name] = (step, (p, opt.init(p), x, y, key))
        losses[name] = float(jax.jit(step)(p, opt.init(p), x, y, key)[2])
    t = race(candidates, rounds=rounds, budget_s=1.0)
    base = t["jax (lax.conv, reduce_window, bernoulli)"]
    print(f"MNIST CNN train step, batch {batch}, jax.jit + optax.adam (first-step losses agree: "
          f"{', '.join(f'{v:.5f}' for v in losses.values())})")
    for name, seconds in t.items():
        print(f"  {name:<42} {seconds * 1e3:7.1f} ms  {batch / seconds:7.0f} samples/s  {base / seconds:5.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a few shapes, 3 rounds")
    ap.add_argument("--methods", action="store_true", help="also time every formulation")
    ap.add_argument("--step", action="store_true", help="only the MNIST CNN training step")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--shapes", nargs="*", help="names from SHAPES or RESNET50_SHAPES")
    ap.add_argument("--resnet50", action="store_true", help="ResNet50's stride-1 layers (224x224, batch 16)")
    ap.add_argument(DEFAULT_MALLOC_FLAG, action="store_true",
                    help="leave glibc's malloc as it is (acted on before minikeras is imported)")
    args = ap.parse_args()
    rounds = args.rounds or (3 if args.quick else 5)
    with CpuSteal() as steal:
        if args.step:
            run_step(rounds)
        else:
            default = [s[0] for s in (RESNET50_SHAPES if args.resnet50 else SHAPES)]
            run_shapes(set(args.shapes or (QUICK if args.quick else default)), rounds, args.methods)
    print(steal.describe())


if __name__ == "__main__":
    main()

"""A 3x3 stride-1 convolution as Winograd's F(2x2, 3x3) (``xla_cpu.winograd``) against the direct
formulation ``xla_cpu.conv`` picks without it (the native kernel or XLA's convolution), on the CPU:
the forward pass, or with ``--kind`` the input gradient (dy with the flipped filter) or the filter
gradient (the forward pass's transpose in the filter).

Each shape runs as it does inside a model, compiled as minikeras compiles its programs
(``xla_cpu.compiler.jit``): a BatchNormalization affine and a ReLU before the convolution, its
bias and a ReLU after (the gradients: the ReLU's mask applied to dy), so that each
formulation gets the fusions XLA gives it there. The two are
timed in alternating rounds (``common.alternating_rounds``); the table has their median wall
milliseconds (Winograd in jax ops and, where it applies, on the native kernel), the direct
formulation's GFLOP/s, the ratios direct / Winograd (above 1: Winograd is faster), the largest
difference from the direct result relative to the output's largest value, and the formulation
``conv.formulation`` picks for the shape (``tuning.CONV_WINOGRAD_*MIN_CHANNELS``).

    python benchmarks/winograd.py
    python benchmarks/winograd.py --rounds 3 --shapes r50_14_256 cifar_16_128
    python benchmarks/winograd.py --kind input_grad
    python benchmarks/winograd.py --kind filter_grad
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import alternating_rounds, block, cpu_model, honour_default_malloc_flag  # noqa: E402

honour_default_malloc_flag()  # before minikeras is imported
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from minikeras.xla_cpu import compiler, conv, tuning, winograd_native  # noqa: E402

# name: batch, height (= width), input channels, output channels
SHAPES = {
    "r50_56_64": (32, 56, 64, 64),      # ResNet50's 3x3 layers, predict's batch
    "r50_28_128": (32, 28, 128, 128),
    "r50_14_256": (32, 14, 256, 256),
    "r50_7_512": (32, 7, 512, 512),
    "vgg_112_128": (4, 112, 128, 128),  # VGG16's
    "vgg_56_256": (8, 56, 256, 256),
    "vgg_28_512": (8, 28, 512, 512),
    "cifar_32_16": (128, 32, 16, 16),   # CIFAR-size residual networks: ResNet-20's three stages
    "cifar_16_32": (128, 16, 32, 32),
    "cifar_8_64": (128, 8, 64, 64),
    "cifar_32_64": (128, 32, 64, 64),   # and wider ones
    "cifar_16_64": (128, 16, 64, 64),
    "cifar_16_128": (128, 16, 128, 128),
    "cifar_8_128": (128, 8, 128, 128),
    "cifar_8_256": (128, 8, 256, 256),
}


def direct_method(kind, x_shape, w_shape):
    """The formulation of ``kind`` ('forward', 'input_grad', 'filter_grad') with Winograd's switched off."""
    saved, tuning.CONV_WINOGRAD = tuning.CONV_WINOGRAD, False
    try:
        return conv.formulation(kind, x_shape, w_shape, (1, 1), "SAME", eigen=True)
    finally:
        tuning.CONV_WINOGRAD = saved


def compiled(function, x, w, native):
    """``function`` compiled and run once with ``tuning.WINOGRAD_NATIVE`` set to ``native`` while it
    traces; returns (the compiled function, its result)."""
    saved, tuning.WINOGRAD_NATIVE = tuning.WINOGRAD_NATIVE, native
    try:
        return function, np.asarray(block(function(x, w)))
    finally:
        tuning.WINOGRAD_NATIVE = saved


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--shapes", nargs="*", choices=sorted(SHAPES), help="default: all")
    parser.add_argument("--kind", choices=("forward", "input_grad", "filter_grad"), default="forward")
    args = parser.parse_args(argv)
    kind = args.kind
    print(f"{cpu_model()}; {kind}; {args.rounds} alternating rounds, median ms; Winograd in jax ops ('jax') and "
          f"on the native kernel ('native', channels in multiples of 16 up to 256)")
    print(f"{'shape':13s} {'direct':>8s} {'ms':>8s} {'GF/s':>6s} {'jax ms':>8s} {'native ms':>10s} "
          f"{'direct/jax':>10s} {'direct/native':>13s} {'rel diff':>9s}  picked")
    rng = np.random.default_rng(0)
    for name in args.shapes or SHAPES:
        n, size, c_in, c_out = SHAPES[name]
        x_shape, w_shape = (n, size, size, c_in), (3, 3, c_in, c_out)
        x = jnp.asarray(rng.standard_normal(x_shape, np.float32))
        w = jnp.asarray(rng.standard_normal(x_shape if kind == "filter_grad" else w_shape, np.float32)
                        / np.sqrt(9 * c_in))
        scale, shift = jnp.asarray(rng.uniform(0.5, 1.5, c_in), jnp.float32), jnp.full((c_in,), 0.1, jnp.float32)
        bias = jnp.asarray(rng.standard_normal(c_out, np.float32) * 0.1)
        direct = direct_method(kind, x_shape, w_shape)

        def layer(method):
            if kind == "input_grad":  # x stands for dy (its shape, the output channels equal to the input's)
                return compiler.jit(lambda dy, w: conv.conv2d_input_grad(
                    dy * (dy[..., :1] > 0), w, x_shape, (1, 1), "SAME", method=method))
            if kind == "filter_grad":  # w stands for dy, of x's shape (the channels are equal)
                return compiler.jit(lambda x, dy: conv.conv2d_filter_grad(
                    jnp.maximum(x * scale + shift, 0), dy * (dy[..., :1] > 0), w_shape, (1, 1), "SAME",
                    method=method))
            return compiler.jit(lambda x, w: jnp.maximum(
                conv.conv2d_forward(jnp.maximum(x * scale + shift, 0), w, (1, 1), "SAME", method=method) + bias, 0))
        native = winograd_native.supported(x_shape, c_out, x.dtype)
        runs, outputs = {}, {}
        for key, method, on in (("direct", direct, False), ("jax", "winograd", False),
                                ("native", "winograd", True)):
            if key != "native" or native:
                runs[key], outputs[key] = compiled(layer(method), x, w, on)
        difference = max(np.abs(outputs[k] - outputs["direct"]).max() for k in outputs) / np.abs(
            outputs["direct"]).max()
        times = alternating_rounds({k: (lambda f=f: f(x, w)) for k, f in runs.items()}, args.rounds)
        ms = {k: statistics.median(t["wall"]) for k, t in times.items()}
        flops = 2 * n * size * size * 9 * c_in * c_out
        picked = conv.formulation(kind, x_shape, w_shape, (1, 1), "SAME", eigen=True)
        native_ms, native_ratio = (f"{ms['native']:10.2f}", f"{ms['direct'] / ms['native']:13.2f}") if native else (
            f"{'-':>10s}", f"{'-':>13s}")
        print(f"{name:13s} {direct:>8s} {ms['direct']:8.2f} {flops / ms['direct'] / 1e6:6.1f} {ms['jax']:8.2f} "
              f"{native_ms} {ms['direct'] / ms['jax']:10.2f} {native_ratio} {difference:9.1e}  {picked}", flush=True)


if __name__ == "__main__":
    main()

"""A strided convolution's forward pass on the native kernel (``conv_native.forward`` with strides)
against XLA's strided convolution, each alone under minikeras' compile options, on the CPU.

For each shape (a ResNet stem, ResNet-20's and ResNet50V2's stride-2 3x3 layers, two few-channel
first layers) it times the two in alternating rounds (``common.alternating_rounds``) and prints
their median wall milliseconds, GFLOP/s and the ratio XLA / native (above 1: the kernel is
faster), with the formulation ``xla_cpu.conv`` picks for the shape inside minikeras' programs
('native' where ``tuning.CONV_NATIVE_STRIDED_FORWARD`` and the row width allow; few-channel
layers take 'taps', XLA's fused multiply-adds).

    python benchmarks/strided_forward.py
    python benchmarks/strided_forward.py --rounds 3 --shapes stem    # one shape
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import alternating_rounds, block, cpu_model, honour_default_malloc_flag  # noqa: E402

honour_default_malloc_flag()  # before minikeras is imported
import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from minikeras.xla_cpu import conv, conv_native  # noqa: E402
from minikeras.xla_cpu.compiler import CPU_OPTIONS  # noqa: E402

# name: x shape (NHWC), filter shape (HWIO), strides, explicit pads
SHAPES = {
    "stem": ((32, 230, 230, 3), (7, 7, 3, 64), (2, 2), ((0, 0), (0, 0))),           # ResNet50 after ZeroPadding2D(3)
    "resnet20_16_32": ((128, 32, 32, 16), (3, 3, 16, 32), (2, 2), ((0, 1), (0, 1))),  # 'SAME', 16 wide out
    "resnet20_32_64": ((128, 16, 16, 32), (3, 3, 32, 64), (2, 2), ((0, 1), (0, 1))),  # 8 wide out
    "v2_64": ((32, 56, 56, 64), (3, 3, 64, 64), (2, 2), ((1, 1), (1, 1))),            # ResNet50V2's strided 3x3
    "v2_128": ((32, 28, 28, 128), (3, 3, 128, 128), (2, 2), ((1, 1), (1, 1))),
    "v2_256": ((32, 14, 14, 256), (3, 3, 256, 256), (2, 2), ((1, 1), (1, 1))),         # 7 wide out
    "gray_1_32": ((128, 28, 28, 1), (3, 3, 1, 32), (2, 2), ((0, 1), (0, 1))),          # a VAE encoder's first
    "rgb_3_32": ((32, 224, 224, 3), (3, 3, 3, 32), (2, 2), ((0, 1), (0, 1))),          # MobileNetV2's first
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--shapes", nargs="*", choices=sorted(SHAPES), help="default: all")
    args = parser.parse_args(argv)
    if not conv_native.available():
        sys.exit(f"the native kernels are unavailable: {conv_native.unavailable_reason()}")
    print(f"{cpu_model()}; {args.rounds} alternating rounds, medians")
    print(f"{'shape':16s} {'xla ms':>8s} {'GF/s':>6s} {'native ms':>10s} {'GF/s':>6s} {'xla/native':>10s}  picked")
    rng = np.random.default_rng(0)
    for name in args.shapes or SHAPES:
        x_shape, w_shape, strides, pads = SHAPES[name]
        x = jax.numpy.asarray(rng.standard_normal(x_shape, np.float32))
        w = jax.numpy.asarray(rng.standard_normal(w_shape, np.float32))
        runs = {"xla": jax.jit(lambda x, w: lax.conv_general_dilated(x, w, strides, pads,
                                                                     dimension_numbers=conv.DIMENSION_NUMBERS),
                               compiler_options=CPU_OPTIONS),
                "native": jax.jit(lambda x, w: conv_native.forward(x, w, pads, strides), compiler_options=CPU_OPTIONS)}
        outputs = {k: block(f(x, w)) for k, f in runs.items()}
        np.testing.assert_allclose(outputs["native"], outputs["xla"], rtol=1e-4, atol=1e-3)
        flops = 2 * outputs["xla"].size * np.prod(w_shape[:3])
        times = alternating_rounds({k: (lambda f=f: f(x, w)) for k, f in runs.items()}, args.rounds)
        ms = {k: statistics.median(t["wall"]) for k, t in times.items()}
        picked = conv.formulation("forward", x_shape, w_shape, strides, pads, eigen=True)
        print(f"{name:16s} {ms['xla']:8.2f} {flops / ms['xla'] / 1e6:6.1f} {ms['native']:10.2f} "
              f"{flops / ms['native'] / 1e6:6.1f} {ms['xla'] / ms['native']:10.2f}  {picked}")


if __name__ == "__main__":
    main()

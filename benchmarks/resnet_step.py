"""ResNet-20 (CIFAR, 32x32x3) training step: the minikeras tape step (mk.function), samples/s,
share of the float32 GEMM bound and first-call time.

Not yet here (see issue #40): the hand-written jax.jit step, fit, and TensorFlow's @tf.function
step in its own process. Run quietly: ``python benchmarks/resnet_step.py --batch-sizes 32,128,256``.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import block, interleaved  # noqa: E402
from train_step import gemm_flops_per_second, mk_tape_step  # noqa: E402

import minikeras as mk  # noqa: E402

layers = mk.layers


def _conv_bn(x, filters, strides, relu):
    x = layers.Conv2D(filters, 3, strides=strides, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    return layers.Activation("relu")(x) if relu else x


def _block(x, filters, strides):
    shortcut = x
    y = _conv_bn(x, filters, strides, relu=True)
    y = _conv_bn(y, filters, 1, relu=False)
    if strides != 1 or x.shape[-1] != filters:
        shortcut = layers.Conv2D(filters, 1, strides=strides, use_bias=False)(x)
        shortcut = layers.BatchNormalization()(shortcut)
    return layers.Activation("relu")(layers.Add()([y, shortcut]))


def resnet20(image_size=32, blocks_per_stage=3, widths=(16, 32, 64)):
    """ResNet-20 (He et al. 2016, CIFAR variant) with 1x1 projection shortcuts."""
    inputs = mk.Input((image_size, image_size, 3))
    x = _conv_bn(inputs, widths[0], 1, relu=True)
    for stage, filters in enumerate(widths):
        for index in range(blocks_per_stage):
            x = _block(x, filters, 2 if stage > 0 and index == 0 else 1)
    x = layers.GlobalAveragePooling2D()(x)
    return mk.Model(inputs, layers.Dense(10)(x))


def training_flops_per_sample(model):
    """``6 * MACs - 2 * MACs(first conv)`` over Conv2D and Dense layers (as train_step.py counts)."""
    macs = []
    for layer in model.layers:
        if not isinstance(layer, (layers.Conv2D, layers.Dense)):
            continue
        kernel = layer.kernel
        out_positions = int(np.prod(layer.output.shape[1:-1])) if len(layer.output.shape) > 2 else 1
        macs.append(out_positions * int(np.prod(kernel.shape)))
    return 6 * sum(macs) - 2 * macs[0]


def measure(batch, image_size, blocks, repeats):
    rng = np.random.default_rng(0)
    images = rng.random((batch, image_size, image_size, 3), dtype=np.float32)
    labels = rng.integers(0, 10, batch)
    model = resnet20(image_size, blocks)
    step = mk_tape_step(model)
    start = time.perf_counter()
    block(step(images, labels))
    first = time.perf_counter() - start
    seconds = interleaved({"tape": lambda: block(step(images, labels))}, repeats=repeats)["tape"]
    return first, seconds, training_flops_per_sample(model)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", default="32,128,256")
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--blocks-per-stage", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    bound = gemm_flops_per_second()
    for batch in (int(b) for b in args.batch_sizes.split(",")):
        first, seconds, flops = measure(batch, args.image_size, args.blocks_per_stage, args.repeats)
        rate = batch / seconds
        print(f"batch {batch}: mk tape {rate:.0f} samples/s, {flops / 1e6:.0f} MFLOP/sample, "
              f"{100 * rate * flops / bound:.1f}% of GEMM bound, first call {first:.1f} s")


if __name__ == "__main__":
    main()

"""ResNet-20 (CIFAR, 32x32x3) training step, Adam, logits with sparse cross-entropy: the minikeras
tape step (``mk.function``), ``fit``, a hand-written ``jax.jit`` step (``lax.conv_general_dilated``,
batch statistics and moving averages, optax.adam) and TensorFlow's ``@tf.function`` step in a
process of its own (``resnet_step_tf.py``, ``--tf-python``), timed in turn in interleaved rounds;
samples/s, share of the float32 GEMM bound and first-call time per batch size. The model is
``resnet20_model.py``'s (~41 M multiply-adds per image forward). The bound counts the direct
convolutions' FLOPs: minikeras runs the 3x3 layers of 32 and 64 channels as Winograd's F(2x2, 3x3),
with 2.25x fewer multiply-adds (``xla_cpu/winograd.py``), so its share is an effective one.

Run quietly: ``python benchmarks/resnet_step.py --batch-sizes 32,128,256 --tf-python tfvenv/bin/python``.
"""
import argparse
import os
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CpuSteal, StepWorker, block, busy_line, cpu_model, interleaved, workers_busy  # noqa: E402
from resnet20_model import resnet20  # noqa: E402
from train_step import gemm_flops_per_second, mk_tape_step  # noqa: E402

import minikeras as mk  # noqa: E402

layers = mk.layers


def training_flops_per_sample(model):
    """``6 * MACs - 2 * MACs(first conv)`` over Conv2D and Dense layers (as train_step.py counts)."""
    macs = []
    for layer in model.layers:
        if not isinstance(layer, (layers.Conv2D, layers.Dense)):
            continue
        out_positions = int(np.prod(layer.output.shape[1:-1])) if len(layer.output.shape) > 2 else 1
        macs.append(out_positions * int(np.prod(layer.kernel.shape)))
    return 6 * sum(macs) - 2 * macs[0]


# -- the hand-written jax step --------------------------------------------------------------------
def _conv(x, kernel, strides):
    return jax.lax.conv_general_dilated(x, kernel, (strides, strides), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _batch_norm(x, bn, stats):
    """Training-mode BatchNormalization (Keras's momentum 0.99, epsilon 1e-3); the new moving stats."""
    mean, var = jnp.mean(x, axis=(0, 1, 2)), jnp.var(x, axis=(0, 1, 2))
    y = (x - mean) * jax.lax.rsqrt(var + 1e-3) * bn["gamma"] + bn["beta"]
    new = {"mean": 0.99 * stats["mean"] + 0.01 * mean, "var": 0.99 * stats["var"] + 0.01 * var}
    return y, new


def jax_resnet20(key, image_size, blocks_per_stage, widths=(16, 32, 64)):
    """(params, stats, forward): ResNet-20 as resnet20_model.py builds it, in plain jax."""
    keys = iter(jax.random.split(key, 64))

    def conv_params(k, c_in, c_out):
        scale = np.sqrt(2.0 / (k * k * c_in))
        return {"kernel": scale * jax.random.normal(next(keys), (k, k, c_in, c_out)),
                "gamma": jnp.ones(c_out), "beta": jnp.zeros(c_out)}

    plan, c_in = [], widths[0]
    params = {"stem": conv_params(3, 3, widths[0]), "blocks": []}
    for stage, filters in enumerate(widths):
        for index in range(blocks_per_stage):
            strides = 2 if stage > 0 and index == 0 else 1
            unit = {"a": conv_params(3, c_in, filters), "b": conv_params(3, filters, filters)}
            if strides != 1 or c_in != filters:
                unit["proj"] = conv_params(1, c_in, filters)
            params["blocks"].append(unit)
            plan.append(strides)
            c_in = filters
    params["dense"] = {"kernel": 0.1 * jax.random.normal(next(keys), (c_in, 10)), "bias": jnp.zeros(10)}
    stats = jax.tree_util.tree_map(lambda p: {"mean": jnp.zeros_like(p["gamma"]), "var": jnp.ones_like(p["gamma"])},
                                   {"stem": params["stem"], "blocks": params["blocks"]},
                                   is_leaf=lambda p: isinstance(p, dict) and "gamma" in p)

    def conv_bn(x, p, s, strides):
        return _batch_norm(_conv(x, p["kernel"], strides), p, s)

    def forward(params, stats, x):
        new = {"blocks": []}
        x, new["stem"] = conv_bn(x, params["stem"], stats["stem"], 1)
        x = jax.nn.relu(x)
        for strides, p, s in zip(plan, params["blocks"], stats["blocks"]):
            n = {}
            y, n["a"] = conv_bn(x, p["a"], s["a"], strides)
            y, n["b"] = conv_bn(jax.nn.relu(y), p["b"], s["b"], 1)
            if "proj" in p:
                x, n["proj"] = conv_bn(x, p["proj"], s["proj"], strides)
            x = jax.nn.relu(y + x)
            new["blocks"].append(n)
        x = jnp.mean(x, axis=(1, 2))
        return x @ params["dense"]["kernel"] + params["dense"]["bias"], new

    return params, stats, forward


def jax_step(image_size, blocks_per_stage):
    params, stats, forward = jax_resnet20(jax.random.key(0), image_size, blocks_per_stage)
    optimizer = optax.adam(1e-3, eps=1e-7)

    def loss_fn(params, stats, x, y):
        logits, new_stats = forward(params, stats, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), new_stats

    @jax.jit
    def step(params, stats, opt_state, x, y):
        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, stats, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), stats, opt_state, loss

    return step, [params, stats, optimizer.init(params)]


# -- measuring ------------------------------------------------------------------------------------
def measure(batch, image_size, blocks, steps, repeats, tf_python):
    rng = np.random.default_rng(0)
    images = rng.random((batch, image_size, image_size, 3), dtype=np.float32)
    labels = rng.integers(0, 10, batch).astype(np.int32)
    mk.utils.set_random_seed(0)
    tape_model, fit_model = resnet20(mk, image_size, blocks), resnet20(mk, image_size, blocks)
    tape = mk_tape_step(tape_model, from_logits=True)
    fit_model.compile(optimizer=mk.optimizers.Adam(1e-3),
                      loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    fit_x, fit_y = np.concatenate([images] * steps), np.concatenate([labels] * steps)
    jstep, state = jax_step(image_size, blocks)
    jx, jy = jnp.asarray(images), jnp.asarray(labels)

    def run_jax(count):
        for _ in range(count):
            state[0], state[1], state[2], loss = jstep(state[0], state[1], state[2], jx, jy)
        block(loss)

    def run_tape(count):
        for _ in range(count):
            loss = tape(images, labels)
        block(loss)

    first_calls = {"jax": lambda: run_jax(1), "mk tape": lambda: run_tape(1),
                   "mk fit": lambda: fit_model.fit(images, labels, batch_size=batch, epochs=1, verbose=0)}
    runs = {"jax": lambda: run_jax(steps), "mk tape": lambda: run_tape(steps),
            "mk fit": lambda: fit_model.fit(fit_x, fit_y, batch_size=batch, epochs=1, verbose=0, shuffle=False)}
    notes, worker = [], None
    with tempfile.TemporaryDirectory() as folder:
        try:
            if tf_python:
                data = os.path.join(folder, "batch.npz")
                np.savez(data, x=images, y=labels, blocks=blocks)
                worker = StepWorker.start("resnet_step_tf.py", tf_python, ["--data", data, "--steps", str(steps)])
                if isinstance(worker, str):
                    notes.append(f"no tf row: {worker}")
                    worker = None
                else:
                    notes.append(f"tf: {worker.description}, a process of its own")
                    first_calls["tf"], runs["tf"] = worker.first, worker.run
            first = {}
            for name, call in first_calls.items():
                start = time.perf_counter()
                call()
                first[name] = time.perf_counter() - start
            walls = {}
            seconds = interleaved(runs, repeats=repeats, samples=walls)
            busy = busy_line(workers_busy({"tf": worker}, walls)) if worker is not None else ""
            if busy:
                notes.append(busy)
        finally:
            if worker is not None:
                worker.close()
    return first, {name: batch * steps / s for name, s in seconds.items()}, training_flops_per_sample(tape_model), notes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", default="32,128,256")
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--blocks-per-stage", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5, help="steps per timed run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tf-python", default=os.environ.get("MINIKERAS_TF_PYTHON", ""),
                        help="a Python with TensorFlow for the tf row ('' for none)")
    args = parser.parse_args(argv)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs")
    bound = gemm_flops_per_second()
    print(f"float32 GEMM: {bound / 1e9:.0f} GFLOP/s")
    with CpuSteal() as steal:
        for batch in (int(b) for b in args.batch_sizes.split(",")):
            first, rates, flops, notes = measure(batch, args.image_size, args.blocks_per_stage, args.steps,
                                                 args.repeats, args.tf_python)
            print(f"\nbatch {batch}: {flops / 1e6:.0f} MFLOP per training sample")
            for note in notes:
                print(f"  {note}")
            print(f"  {'':8s} {'samples/s':>10s} {'vs jax':>7s} {'vs tf':>7s} {'% bound':>8s} {'first s':>8s}")
            for name, rate in rates.items():
                vs_tf = f"{rate / rates['tf']:6.2f}x" if "tf" in rates else "      -"
                print(f"  {name:8s} {rate:10.0f} {rate / rates['jax']:6.2f}x {vs_tf} "
                      f"{100 * rate * flops / bound:7.1f}% {first[name]:8.1f}")
    print(steal.describe())


if __name__ == "__main__":
    main()

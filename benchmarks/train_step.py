"""Training throughput of the MNIST convnets: minikeras vs a hand-written jax.jit + optax step.

For each model, in one run and timed in turn (so machine load hits all alike):
  * jax:      a hand-written ``jax.jit`` step (``lax.conv_general_dilated``, ``reduce_window``,
              ``jax.random.bernoulli`` dropout, optax.adam),
  * jax eigen: the same step compiled with the XLA:CPU setting minikeras compiles its programs
              with (``minikeras.xla_cpu.compiler.CPU_OPTIONS``: convolutions on Eigen), on CPU,
  * mk tape:  a ``mk.function`` GradientTape step with ``optimizer.apply_gradients``,
  * mk fit:   ``model.fit`` (one epoch over the timed batches),
  * mk fit fn: the same, the classic CNN written with the functional API (``mk.Model(inputs, outputs)``):
              it should match ``mk fit`` (one compiled program, no per-layer Python at run time),
  * tf:       when TensorFlow is installed for ``--tf-python`` (``$MINIKERAS_TF_PYTHON``, else this
              interpreter; ``pip install -e ".[bench]"``), the TF 2 tutorial's ``@tf.function``
              GradientTape step on Keras layers (``tf_reference.py``, driven by ``train_step_tf.py``),
  * torch:    when PyTorch is installed for ``--torch-python`` (this interpreter by default), the
              same model in PyTorch, an eager step with Adam (``train_step_torch.py``),
each of the last two in a process of its own (with its default allocator and threads: minikeras's
import changes this process's malloc setting), which this one drives over a pipe, so that they too
are timed in turn,
reported as samples/s in steady state and as ratios to jax; compile times are separate. The last
column is the minor page faults per training step while each contender ran: hundreds are normal,
thousands mean the memory allocator hands out fresh pages every step (see
``mk.config.reuse_freed_host_memory``, which ``import minikeras`` makes, and ``--default-malloc``).

The GEMM bound: a 2048^3 float32 matmul is timed in the same run (``gemm_flops_per_second``), and
a model's training FLOPs per sample are counted as ``6 * sum(MACs) - 2 * MACs(first layer)`` (a
forward pass, an input gradient and a weight gradient per layer, but no input gradient for the
first one); the bound is the samples/s a step would reach if every FLOP ran at GEMM speed, and
each row prints its share of that bound. The FLOPs are the direct convolutions': minikeras runs
3x3 layers of 32 channels and more as Winograd's F(2x2, 3x3), with 2.25x fewer multiply-adds
(``xla_cpu/winograd.py``), so its share can pass 100%.

Models: the classic Keras MNIST CNN (Conv2D 32 -> Conv2D 64 -> MaxPool -> Dropout -> Flatten ->
Dense 128 -> Dropout -> Dense 10) and the Keras "simple MNIST convnet" (Conv2D 32 -> MaxPool ->
Conv2D 64 -> MaxPool -> Flatten -> Dropout -> Dense 10), Adam, batch 128.

    python benchmarks/train_step.py            # both models
    python benchmarks/train_step.py --quick    # fewer steps
    python benchmarks/train_step.py --repeats 21   # a finer median on a noisy machine (default 5)
    --tf-python /path/to/python                # a Python with TensorFlow, if not this one ('' for no tf row)
    --torch-compile                            # the PyTorch row with torch.compile instead of eager
    --default-malloc                           # without the setting import minikeras makes (this process)
    --policy mixed_bfloat16                    # minikeras's and TensorFlow's rows under a dtype policy

With ``--policy`` the minikeras rows (and TensorFlow's) build the models under that dtype policy
(the softmax a float32 layer of its own, as TensorFlow's mixed precision guide does), an ``mk
tape f32`` row times minikeras's own float32 step beside them, and the header prints the CPU's
bfloat16 flags and the path bfloat16 products take (``mk.config.bfloat16_products()``: XLA's
bfloat16 dot with AVX512_BF16 or AMX, else the float32 fallback). The jax rows stay float32.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, os.path.dirname(__file__))
from common import (  # noqa: E402
    DEFAULT_MALLOC_FLAG,
    CpuSteal,
    StepWorker,
    block,
    busy_line,
    cpu_model,
    honour_default_malloc_flag,
    interleaved,
    workers_busy,
)

honour_default_malloc_flag()  # before minikeras is imported
import minikeras as mk  # noqa: E402
from minikeras.xla_cpu import compiler  # noqa: E402


# -- the models in minikeras --------------------------------------------------------------------
def _sequential(layers, policy):
    """``mk.Sequential(layers)``; under a ``policy`` its layers take it and the last Dense's softmax
    becomes a float32 ``Activation`` (TF's mixed precision guide)."""
    if policy is not None:
        layers = layers[:-1] + [mk.layers.Dense(10), mk.layers.Activation("softmax", dtype="float32")]
        for layer in layers[1:-1]:
            layer.dtype_policy = policy
    return mk.Sequential(layers)


def classic_cnn(policy=None):
    return _sequential([
        mk.Input((28, 28, 1)),
        mk.layers.Conv2D(32, 3, activation="relu"), mk.layers.Conv2D(64, 3, activation="relu"),
        mk.layers.MaxPooling2D(), mk.layers.Dropout(0.25), mk.layers.Flatten(),
        mk.layers.Dense(128, activation="relu"), mk.layers.Dropout(0.5), mk.layers.Dense(10, activation="softmax")],
        policy)


def classic_cnn_functional():
    """The classic CNN written with the functional API: mk.Model(inputs, outputs)."""
    inputs = mk.Input((28, 28, 1))
    x = mk.layers.Conv2D(32, 3, activation="relu")(inputs)
    x = mk.layers.Conv2D(64, 3, activation="relu")(x)
    x = mk.layers.Dropout(0.25)(mk.layers.MaxPooling2D()(x))
    x = mk.layers.Dense(128, activation="relu")(mk.layers.Flatten()(x))
    outputs = mk.layers.Dense(10, activation="softmax")(mk.layers.Dropout(0.5)(x))
    return mk.Model(inputs, outputs)


def simple_cnn(policy=None):
    return _sequential([
        mk.Input((28, 28, 1)),
        mk.layers.Conv2D(32, 3, activation="relu"), mk.layers.MaxPooling2D(),
        mk.layers.Conv2D(64, 3, activation="relu"), mk.layers.MaxPooling2D(),
        mk.layers.Flatten(), mk.layers.Dropout(0.5), mk.layers.Dense(10, activation="softmax")], policy)


# -- the same models written by hand in JAX ------------------------------------------------------
def _conv(x, w, b):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y + b)


def _pool(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def _dropout(key, x, rate):
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def jax_forward(kind):
    def classic(params, x, key):
        k1, k2 = jax.random.split(key)
        x = _pool(_conv(_conv(x, *params[0]), *params[1]))
        x = _dropout(k1, x, 0.25).reshape(x.shape[0], -1)
        x = _dropout(k2, jax.nn.relu(x @ params[2][0] + params[2][1]), 0.5)
        return x @ params[3][0] + params[3][1]

    def simple(params, x, key):
        x = _pool(_conv(_pool(_conv(x, *params[0])), *params[1])).reshape(x.shape[0], -1)
        x = _dropout(key, x, 0.5)
        return x @ params[2][0] + params[2][1]

    return classic if kind == "classic" else simple


def jax_step(kind, model, compiler_options=None):
    """A hand-written train step over the model's initial weights; returns (step, state)."""
    forward = jax_forward(kind)
    weights = [w._value for w in model.trainable_variables]
    params = [tuple(weights[i:i + 2]) for i in range(0, len(weights), 2)]
    optimizer = optax.adam(1e-3, eps=1e-7)

    def loss_fn(params, x, y, key):
        logits = forward(params, x, key)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    def step(params, opt_state, x, y, key):
        key, sub = jax.random.split(key)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, sub)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, key, loss

    return jax.jit(step, compiler_options=compiler_options), [params, optimizer.init(params), jax.random.key(0)]


def mk_tape_step(model, from_logits=False):
    """The TF 2 tutorial's custom step on ``model`` (Adam 1e-3), compiled with ``mk.function``;
    ``from_logits``: the model outputs logits rather than probabilities."""
    optimizer = mk.optimizers.Adam(1e-3)
    loss_fn = mk.losses.SparseCategoricalCrossentropy(from_logits=from_logits)

    @mk.function
    def tape_step(images, labels):
        with mk.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return tape_step


# -- the GEMM bound -------------------------------------------------------------------------------
def training_flops_per_sample(model):
    """``6 * sum(MACs) - 2 * MACs(first layer)`` over the model's Conv2D and Dense layers."""
    macs = []
    for layer in model.layers:
        kernel = [w for w in layer.trainable_variables if len(w.shape) >= 2]
        if not kernel:
            continue
        out_positions = int(np.prod(layer.output_shape[1:-1])) if len(layer.output_shape) > 2 else 1
        macs.append(out_positions * int(np.prod(kernel[0].shape)))
    return 6 * sum(macs) - 2 * macs[0]


def gemm_flops_per_second(n=2048, repeats=5):
    """FLOP/s of an n^3 float32 matmul under plain ``jax.jit`` (best of ``repeats``)."""
    a = jnp.asarray(np.random.default_rng(0).random((n, n), dtype=np.float32))
    matmul = jax.jit(lambda x, y: x @ y)
    block(matmul(a, a))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        block(matmul(a, a))
        best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best


def measure(kind, batch, steps, repeats, torch_python=None, torch_compile=False, policy=None, tf_python=None):
    rng = np.random.default_rng(0)
    x = rng.random((steps * batch, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, steps * batch).astype(np.int32)
    batches = [(jnp.asarray(x[i * batch:(i + 1) * batch]), jnp.asarray(y[i * batch:(i + 1) * batch]))
               for i in range(steps)]
    build_under = classic_cnn if kind == "classic" else simple_cnn

    def build():
        return build_under(policy)

    mk.random.set_seed(0)
    reference_model = build_under(None)
    step, state = jax_step(kind, reference_model)

    def jax_runner(step, state):
        def run():
            for xb, yb in batches:
                state[0], state[1], state[2], loss = step(state[0], state[1], xb, yb, state[2])
            block(loss)
        return run

    run_jax = jax_runner(step, state)

    tape_step = mk_tape_step(build())

    def run_tape():
        for xb, yb in batches:
            loss = tape_step(xb, yb)
        block(loss)

    fit_model = build()
    fit_model.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")

    def run_fit():
        fit_model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)

    first_calls = {"jax": lambda: (step(state[0], state[1], *batches[0], state[2]), None),
                   "mk tape": lambda: block(tape_step(*batches[0])),
                   "mk fit": lambda: fit_model.fit(x[:batch], y[:batch], batch_size=batch, verbose=0)}
    runs = {"jax": run_jax, "mk tape": run_tape, "mk fit": run_fit}
    if policy is not None:  # minikeras's own float32 step beside the policy's
        float32_step = mk_tape_step(build_under(None))

        def run_float32_tape():
            for xb, yb in batches:
                loss = float32_step(xb, yb)
            block(loss)
        first_calls["mk tape f32"], runs["mk tape f32"] = lambda: block(float32_step(*batches[0])), run_float32_tape
    if kind == "classic" and policy is None:  # the functional API's row: the same model as mk.Model(inputs, outputs)
        functional_model = classic_cnn_functional()
        functional_model.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
        first_calls["mk fit fn"] = lambda: functional_model.fit(x[:batch], y[:batch], batch_size=batch, verbose=0)
        runs["mk fit fn"] = lambda: functional_model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
    if compiler.cpu_options() is not None:  # the same hand-written step with minikeras' XLA:CPU setting
        eigen_step, eigen_state = jax_step(kind, reference_model, compiler.cpu_options())
        first_calls["jax eigen"] = lambda: (eigen_step(eigen_state[0], eigen_state[1], *batches[0], eigen_state[2]),
                                            None)
        runs["jax eigen"] = jax_runner(eigen_step, eigen_state)
    notes = []
    with tempfile.TemporaryDirectory() as folder:
        data = os.path.join(folder, f"{kind}_batches.npz")
        np.savez(data, x=x, y=y)
        children = {
            "tf": (tf_python, "train_step_tf.py",
                   ["--kind", kind, "--batch-size", str(batch)] + (["--policy", policy] if policy else [])),
            "torch": (torch_python, "train_step_torch.py",
                      ["--kind", kind, "--batch-size", str(batch)] + (["--compile"] if torch_compile else []))}
        workers = {}
        try:
            for name, (python, script, options) in children.items():
                if not python:
                    continue
                worker = StepWorker.start(script, python, ["--data", data, *options])
                if isinstance(worker, str):
                    notes.append(f"no {name} row: {worker}")
                    continue
                workers[name] = worker
                first_calls[name], runs[name] = worker.first, worker.run
                notes.append(f"{name}: {worker.description}, a process of its own")
            compile_seconds = {}
            for name, run_first in first_calls.items():
                start = time.perf_counter()
                block(run_first())
                compile_seconds[name] = time.perf_counter() - start
            faults = {}
            walls = {}
            seconds = interleaved(runs, repeats, faults, samples=walls)
            busy = busy_line(workers_busy(workers, walls))  # whether a child ran on fewer cores than it has
            if busy:
                notes.append(busy)
        finally:
            for worker in workers.values():
                worker.close()
    for name, worker in workers.items():  # this process's faults while a child ran say nothing: its own count
        faults[name] = statistics.median(worker.faults)
    return ({name: steps * batch / s for name, s in seconds.items()}, compile_seconds,
            training_flops_per_sample(reference_model), {name: n / steps for name, n in faults.items()}, notes)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and repeats")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed rounds per contender, the median reported (default 5; 3 with --quick)")
    parser.add_argument("--models", default="classic,simple")
    parser.add_argument(DEFAULT_MALLOC_FLAG, action="store_true",
                        help="leave glibc's malloc as it is (MINIKERAS_REUSE_HOST_MEMORY=0; applies to every "
                             "contender, since it is process-wide)")
    parser.add_argument("--tf-python", default=os.environ.get("MINIKERAS_TF_PYTHON") or sys.executable,
                        help="the interpreter that runs the TensorFlow row in its own process (default: "
                             "$MINIKERAS_TF_PYTHON, else this one); '' for no TensorFlow row")
    parser.add_argument("--torch-python", default=sys.executable,
                        help="the interpreter that runs the PyTorch row (default: this one); '' for no PyTorch row")
    parser.add_argument("--torch-compile", action="store_true",
                        help="the PyTorch row with torch.compile (default: eager PyTorch)")
    parser.add_argument("--policy", default=None,
                        help="a dtype policy (mixed_bfloat16) for the minikeras and TensorFlow rows")
    args = parser.parse_args(argv)  # --default-malloc acted before the import (honour_default_malloc_flag)
    steps, repeats = (4, 3) if args.quick else (12, 5)
    if args.repeats is not None:
        if args.repeats < 1:
            parser.error(f"--repeats: expected an integer >= 1, received {args.repeats}")
        repeats = args.repeats
    malloc = "glibc's default malloc" if args.default_malloc else "freed host memory reused"
    print(f"jax {jax.__version__} on {jax.default_backend()} ({jax.devices()[0].device_kind}; {cpu_model()}, "
          f"{os.cpu_count()} CPUs), batch {args.batch_size}, {steps} steps x {repeats} repeats, median; {malloc}")
    if args.policy is not None:
        mk.mixed_precision.Policy(args.policy)  # an unknown name stops here, before any timing
        print(f"dtype policy {args.policy} (minikeras and TensorFlow rows; jax rows float32); bfloat16 products: "
              f"{mk.config.bfloat16_products()}")
    with CpuSteal() as steal:
        gemm = gemm_flops_per_second()
        print(f"GEMM 2048^3 float32 (jax.jit): {gemm / 1e9:.0f} GFLOP/s")
        for kind in args.models.split(","):
            rates, compiles, flops, faults, notes = measure(kind, args.batch_size, steps, repeats, args.torch_python,
                                                            args.torch_compile, args.policy, args.tf_python)
            bound = gemm / flops
            print(f"\n{kind} MNIST CNN: {flops / 1e6:.1f} MFLOP per training sample, GEMM bound {bound:.0f} "
                  f"samples/s")
            print(f"  {'':11} {'samples/s':>10} {'vs jax':>7} {'vs tf':>6} {'vs torch':>8} {'of bound':>8} "
                  f"{'first call (compile)':>21} {'faults/step':>11}")
            for name, rate in rates.items():
                vs_tf = f"{rate / rates['tf']:5.2f}x" if "tf" in rates else "    -"
                vs_torch = f"{rate / rates['torch']:7.2f}x" if "torch" in rates else "       -"
                fault_text = f"{faults[name]:11.0f}" if name in faults else f"{'-':>11}"
                print(f"  {name:11} {rate:10.0f} {rate / rates['jax']:6.2f}x {vs_tf:>6} {vs_torch:>8} "
                      f"{rate / bound:7.0%} {compiles[name]:19.1f} s {fault_text}")
            for note in notes:
                print(f"  ({note})")
            if "mk tape f32" in rates:
                print(f"  under {args.policy}: mk tape {rates['mk tape'] / rates['mk tape f32']:.2f}x and mk fit "
                      f"{rates['mk fit'] / rates['mk tape f32']:.2f}x minikeras's float32 tape step")
        gemm_after = gemm_flops_per_second()
        print(f"\nGEMM again at the end: {gemm_after / 1e9:.0f} GFLOP/s")
    print(f"{steal.describe()}")


if __name__ == "__main__":
    main()

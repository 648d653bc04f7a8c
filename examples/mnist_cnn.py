"""MNIST with the classic Keras convnet: the main job of minikeras.

Conv2D(32, 3x3, relu) -> Conv2D(64, 3x3, relu) -> MaxPooling2D -> Dropout(0.25) -> Flatten
-> Dense(128, relu) -> Dropout(0.5) -> Dense(10, softmax), trained with Adam on
sparse categorical cross-entropy, batch 64. Two ways, same model:

* ``--mode tape``: a custom GradientTape step, compiled with ``mk.function``, applying
  gradients with ``optimizer.apply_gradients(zip(grads, variables))``;
* ``--mode fit``: ``model.compile(...)`` and ``model.fit(...)``.

Training runs for 3 epochs (``--epochs`` takes fractions: the last epoch may stop part way).
Adam's learning rate warms up from 2e-4 to 2e-3 over the first 100 steps, stays there until two
thirds of the training, then follows a cosine decay to 0 at the last step (``WarmupStableDecay``,
a ``LearningRateSchedule`` subclass as in the TensorFlow tutorials). With a constant 1e-3 at
batch 128, as in the Keras example, this model needs 5 epochs for 99% test accuracy; with this
schedule it has 99% after the third (seeds 0, 1, 2: 0.9915, 0.9911, 0.9910 on a Zen 3), and
0.9822-0.9888 after the second, far enough below 99% that the epoch at which it is reached does
not depend on the seed. Batch 64 rather than the Keras example's 128: with the same schedule
shape at batch 128 (peak 4e-3) the end sat at 0.9900-0.9915, moving by +-0.0005 with the last bit
of a gradient's rounding, and seed 1 ended at 0.9900; at batch 64 (peak 2e-3) the twice as many
updates end at 0.9910-0.9915 in about the same time (the tables in the README).

It says what it is doing from the start (loading, compiling), shows the steps done four times
per epoch (in the tape loop; counting dispatched steps, so no step waits for the host), and
prints test accuracy after every epoch (and after a final partial one), with the seconds
since training was asked for: loading the data, building the model and compiling included,
importing jax and minikeras (~1.5 s) not. That is the time-to-99% curve; the Keras example
reaches about 0.99.

    python examples/mnist_cnn.py                       # tape loop, 3 epochs
    python examples/mnist_cnn.py --mode fit
    python examples/mnist_cnn.py --epochs 1 --subset 2000   # a quick run
    python examples/mnist_cnn.py --policy mixed_bfloat16    # bfloat16 compute, float32 weights

Under a mixed policy (``--policy mixed_bfloat16``) the layers compute in bfloat16 and keep
float32 weights; the last Dense's softmax becomes an ``Activation("softmax", dtype="float32")``
of its own, as in TensorFlow's mixed precision guide, so that the probabilities and the loss
are float32 (docs/mixed_precision.md).

The compiled training step is kept on disk (``mk.config.enable_compilation_cache``), so a second
run skips XLA's compile: ``--no-compilation-cache`` turns that off.
"""
import argparse
import math
import time
import warnings

import numpy as np

import minikeras as mk


def build_model(policy=None):
    """The Keras "mnist_cnn" model (softmax output); under a mixed ``policy`` (a policy name),
    its layers compute in that policy's dtype and the softmax is a float32 layer of its own."""
    if policy is not None and mk.mixed_precision.Policy(policy).compute_dtype != "float32":
        return mk.Sequential(_layers(policy)[:-1] + [mk.layers.Dense(10, dtype=policy),
                                                      mk.layers.Activation("softmax", dtype="float32")])
    return mk.Sequential(_layers(policy))


def _layers(policy):
    return [
        mk.Input(shape=(28, 28, 1)),
        mk.layers.Conv2D(32, kernel_size=(3, 3), activation="relu", dtype=policy),
        mk.layers.Conv2D(64, (3, 3), activation="relu", dtype=policy),
        mk.layers.MaxPooling2D(pool_size=(2, 2), dtype=policy),
        mk.layers.Dropout(0.25, dtype=policy),
        mk.layers.Flatten(dtype=policy),
        mk.layers.Dense(128, activation="relu", dtype=policy),
        mk.layers.Dropout(0.5, dtype=policy),
        mk.layers.Dense(10, activation="softmax", dtype=policy),
    ]


def load(subset=None):
    """MNIST as float32 images in [0, 1] of shape (n, 28, 28, 1) and integer labels."""
    (x_train, y_train), (x_test, y_test) = mk.datasets.mnist.load_data()
    if subset:
        x_train, y_train = x_train[:subset], y_train[:subset]
    prepare = lambda x: (x.astype(np.float32) / 255.0)[..., None]  # noqa: E731
    return (prepare(x_train), y_train.astype(np.int32)), (prepare(x_test), y_test.astype(np.int32))


def training_steps(epochs, steps_per_epoch):
    """Steps in ``epochs`` (a positive number, possibly fractional) of ``steps_per_epoch``; at least 1."""
    return max(1, round(epochs * steps_per_epoch))


class WarmupStableDecay(mk.optimizers.schedules.LearningRateSchedule):
    """Linear warmup from ``peak / 10`` to ``peak`` over ``warmup_steps``, then ``peak`` until step
    ``decay_start``, then a cosine decay to 0 at step ``total`` (and 0 after it)."""

    def __init__(self, total, decay_start, peak=2e-3, warmup_steps=100):
        if not 0 <= warmup_steps <= decay_start < total:
            raise ValueError(f"WarmupStableDecay: expected 0 <= warmup_steps <= decay_start < total, received "
                             f"warmup_steps={warmup_steps}, decay_start={decay_start}, total={total}")
        self.total, self.decay_start, self.peak, self.warmup_steps = total, decay_start, peak, warmup_steps

    def __call__(self, step):
        step = mk.cast(step, "float32")
        warmup = self.peak / 10 + 0.9 * self.peak * step / max(self.warmup_steps, 1)
        decayed = mk.minimum(mk.maximum(step - self.decay_start, 0.0) / (self.total - self.decay_start), 1.0)
        return mk.where(step < self.warmup_steps, warmup, 0.5 * self.peak * (1.0 + mk.cos(math.pi * decayed)))

    def get_config(self):
        return {"total": self.total, "decay_start": self.decay_start, "peak": self.peak,
                "warmup_steps": self.warmup_steps}


def learning_rate(total, peak=2e-3, warmup_steps=100):
    """The main job's schedule over ``total`` steps: warmup, ``peak`` until two thirds, cosine to 0."""
    decay_start = (2 * total) // 3
    return WarmupStableDecay(total, decay_start, peak, min(warmup_steps, decay_start))


def train_with_tape(model, data, epochs, batch_size, log, start):
    """The custom loop: a compiled GradientTape step over shuffled batches."""
    (x_train, y_train), (x_test, y_test) = data
    steps_per_epoch = math.ceil(len(x_train) / batch_size)
    total = training_steps(epochs, steps_per_epoch)
    optimizer = mk.optimizers.Adam(learning_rate(total))
    loss_fn = mk.losses.SparseCategoricalCrossentropy()
    train_ds = mk.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train)).batch(batch_size)

    @mk.function
    def train_step(images, labels):
        with mk.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_fn(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    predict = mk.function(lambda images: mk.argmax(model(images, training=False), axis=1))
    curve = []
    done = 0
    log(f"Training {total} steps of {batch_size} examples ({epochs:g} epochs of {steps_per_epoch} steps); the first "
        "step compiles the training step")
    while done < total:
        loss = mk.metrics.Mean()
        steps = min(steps_per_epoch, total - done)  # the last epoch may stop part way
        report_every = max(1, steps_per_epoch // 4)
        for step, (images, labels) in enumerate(train_ds.take(steps), 1):
            called = time.perf_counter()
            loss.update_state(train_step(images, labels))
            if done == 0 and step == 1:  # the first call traces and compiles (and builds native kernels once)
                log(f"  compiled the training step in {time.perf_counter() - called:.1f} s; first step at "
                    f"{time.perf_counter() - start:.1f} s")
            elif step % report_every == 0 and step < steps:
                log(f"  epoch {done // steps_per_epoch + 1}: step {step}/{steps} dispatched, "
                    f"{time.perf_counter() - start:.1f} s")
        done += steps
        accuracy = accuracy_of(predict, x_test, y_test)
        curve.append((round(done / steps_per_epoch, 2), time.perf_counter() - start, accuracy))
        log(f"epoch {curve[-1][0]:g}/{epochs:g}: loss {float(loss.result()):.4f}, test accuracy {accuracy:.4f}, "
            f"{curve[-1][1]:.1f} s")
    return curve


def train_with_fit(model, data, epochs, batch_size, log, start):
    """The same model trained by ``model.fit``; a callback records test accuracy per epoch.
    A fractional last epoch is a second ``fit`` call, Keras's way to go on training: from
    ``initial_epoch``, with ``steps_per_epoch`` the remaining steps."""
    (x_train, y_train), (x_test, y_test) = data
    steps_per_epoch = math.ceil(len(x_train) / batch_size)
    total = training_steps(epochs, steps_per_epoch)
    model.compile(optimizer=mk.optimizers.Adam(learning_rate(total)), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    curve = []
    log(f"Training {total} steps of {batch_size} examples ({epochs:g} epochs of {steps_per_epoch} steps) with fit; "
        "the first step compiles the training step")

    def on_epoch_begin(epoch, logs=None):
        log(f"  epoch {epoch + 1}: {time.perf_counter() - start:.1f} s")

    def on_epoch_end(epoch, logs):
        _, accuracy = model.evaluate(x_test, y_test, batch_size=1000, verbose=0)
        done = round(int(model.optimizer.iterations.numpy()) / steps_per_epoch, 2)
        curve.append((done, time.perf_counter() - start, accuracy))
        log(f"epoch {done:g}/{epochs:g}: loss {logs['loss']:.4f}, test accuracy {accuracy:.4f}, "
            f"{curve[-1][1]:.1f} s")

    # epoch hooks only: a batch hook would read the logs (wait for the device) after every step
    record = mk.callbacks.LambdaCallback(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end)
    whole, rest = divmod(total, steps_per_epoch)
    if whole:
        model.fit(x_train, y_train, batch_size=batch_size, epochs=whole, verbose=0, callbacks=[record])
    if rest:
        model.fit(x_train, y_train, batch_size=batch_size, epochs=whole + 1, initial_epoch=whole,
                  steps_per_epoch=rest, verbose=0, callbacks=[record])
    return curve


def accuracy_of(predict, x, y, batch_size=1000):
    correct = sum(int(np.sum(predict(x[i:i + batch_size]).numpy() == y[i:i + batch_size]))
                  for i in range(0, len(x), batch_size))
    return correct / len(x)


def say(text):
    print(text, flush=True)


def run(mode="tape", epochs=3, batch_size=64, subset=None, seed=0, log=say, policy=None):
    """Trains the convnet; returns the curve [(epochs done, seconds, test accuracy), ...], the
    seconds counted from the call (loading the data, building the model and compiling included).
    ``policy``: a dtype policy name for the layers ('mixed_bfloat16'); None: float32."""
    start = time.perf_counter()
    mk.random.set_seed(seed)
    log("Loading MNIST" + (f" (the first {subset} training examples)" if subset else ""))
    data = load(subset)
    log(f"Loaded {len(data[0][0])} training and {len(data[1][0])} test images: {time.perf_counter() - start:.1f} s; "
        f"building the model ({mode} mode)")
    model = build_model(policy)
    if policy is not None:
        log(f"Dtype policy {policy}: " + ", ".join(sorted({layer.compute_dtype for layer in model.layers})) +
            f" compute, float32 weights; bfloat16 products: {mk.config.bfloat16_products()}")
    train = train_with_tape if mode == "tape" else train_with_fit
    return train(model, data, epochs, batch_size, log, start)


def positive_float(text):
    """argparse type: a number > 0."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, received {text!r}")
    return value


def positive_int(text):
    """argparse type: an integer > 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer > 0, received {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected an integer > 0, received {text!r}")
    return value


def enable_compilation_cache():
    """Keeps compiled programs on disk (``mk.config.enable_compilation_cache``); where that cannot
    be written (a read-only home directory), warns and trains without it. Returns the folder or None."""
    try:
        return mk.config.enable_compilation_cache()
    except OSError as error:
        warnings.warn(f"training without the compilation cache ({error}); set MINIKERAS_HOME to a writable folder "
                      "to keep compiled programs between runs", RuntimeWarning, stacklevel=2)
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["tape", "fit"], default="tape")
    parser.add_argument("--epochs", type=positive_float, default=3,
                        help="epochs to train, fractions allowed (2.5: the last one stops halfway)")
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--subset", type=positive_int, default=None, help="train on the first N examples only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", default=None,
                        help="a dtype policy for the layers, such as mixed_bfloat16 (default: float32)")
    parser.add_argument("--no-compilation-cache", action="store_true",
                        help="compile from scratch; by default compiled programs are kept in ~/.minikeras/compiled "
                             "and a later run starts training ~1.2 s sooner")
    args = parser.parse_args(argv)
    if not args.no_compilation_cache:
        enable_compilation_cache()
    start = time.perf_counter()
    curve = run(args.mode, args.epochs, args.batch_size, args.subset, args.seed, policy=args.policy)
    reached = next((f"{seconds:.1f} s (epoch {epoch:g})" for epoch, seconds, accuracy in curve if accuracy >= 0.99),
                   "not reached")
    print(f"final test accuracy {curve[-1][2]:.4f} (Keras example: about 0.99); time to 99%: {reached}; "
          f"wall time {time.perf_counter() - start:.1f} s")
    return curve


if __name__ == "__main__":
    main()

"""Writes the example notebooks (``examples/*.ipynb``) from the cell texts below.

The notebooks are the example scripts told as tutorials, with plots. Edit the cells here,
not in Jupyter, and regenerate; the committed notebooks carry no outputs, except the
GradientTape tour, whose small text outputs are the point of it (``--execute`` refreshes
them). Every notebook reads ``MINIKERAS_QUICK=1`` to run a short version (the tests and CI
execute them that way).

    python examples/make_notebooks.py             # rewrite every notebook (tour outputs kept)
    python examples/make_notebooks.py --execute   # also re-run the tour to refresh its outputs
    python examples/make_notebooks.py --check     # exit 1 if a notebook differs from its cells
"""
import argparse
import os
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent

SETUP = '''\
%matplotlib inline
import os
import time

import matplotlib.pyplot as plt
import numpy as np

import minikeras as mk

QUICK = os.environ.get("MINIKERAS_QUICK") == "1"  # a short run (the tests, CI); unset: the full tutorial'''


# ---------------------------------------------------------------------------------------
LINEAR_REGRESSION = [
    ("md", """\
# Linear regression with a GradientTape

The TensorFlow 2 tutorial's first program, with `tf.` renamed to `mk.`: learn `y = 10x + 5`
from noisy samples with two Variables, a `GradientTape`, and plain gradient descent
(`assign_sub(grad * 0.001)`). A few steps run eagerly, so you can see the tape at work, then the
same step is compiled with `mk.function` for the full run.

Set `MINIKERAS_QUICK=1` for a short run (2,000 compiled steps instead of 100,000).
The same program as a script: `python examples/linear_regression.py`."""),
    ("code", SETUP + '''
STEPS = 2_000 if QUICK else 100_000  # compiled steps
EAGER_STEPS = 5 if QUICK else 100'''),
    ("md", """\
## The data: `y = 10x + 5 + noise`"""),
    ("code", '''\
rng = np.random.default_rng(0)
x_np = rng.uniform(-1.0, 1.0, 1000).astype(np.float32)
y_np = (10.0 * x_np + 5.0 + rng.normal(0.0, 0.5, 1000)).astype(np.float32)
x, y = mk.constant(x_np), mk.constant(y_np)
print(x.shape, y.shape, x[:3], y[:3], sep="\\n")'''),
    ("md", """\
## The model and one training step

Two trainable Variables. Reading them inside the `with` block makes the tape watch them, so
`tape.gradient` can differentiate the loss with respect to both."""),
    ("code", '''\
a = mk.Variable(np.random.default_rng(1).random(), name="a", dtype=mk.float32)
b = mk.Variable(np.random.default_rng(2).random(), name="b", dtype=mk.float32)


def step(real_x, real_y):
    with mk.GradientTape(persistent=True) as tape:
        pred_y = a * real_x + b
        reg_loss = mk.reduce_mean(mk.square(pred_y - real_y))
    a_gradients, b_gradients = tape.gradient(reg_loss, (a, b))
    a.assign_sub(a_gradients * 0.001)
    b.assign_sub(b_gradients * 0.001)
    return reg_loss'''),
    ("md", """\
## A few eager steps

Eagerly, every op runs as it is called and the tape records it: easy to debug, a few
dispatches per op."""),
    ("code", '''\
losses = [step(x, y), step(x, y)]  # the first calls compile each op's kernel; time the steady state
start = time.perf_counter()
for _ in range(EAGER_STEPS):
    losses.append(step(x, y))
float(losses[-1])
eager_seconds = time.perf_counter() - start
print(f"eager:    {EAGER_STEPS} steps in {eager_seconds:.3f} s "
      f"({eager_seconds / EAGER_STEPS * 1e6:.0f} µs/step), loss {float(losses[-1]):.4f}")'''),
    ("md", """\
## The full run, compiled

`mk.function(step)` traces the step once (tape, gradients and updates included) into one XLA
program; `a` and `b` become its inputs and outputs, and their new values are written back after
each call."""),
    ("code", '''\
compiled_step = mk.function(step)
start = time.perf_counter()
for _ in range(STEPS):
    losses.append(compiled_step(x, y))
float(losses[-1])
compiled_seconds = time.perf_counter() - start
print(f"compiled: {STEPS} steps in {compiled_seconds:.3f} s "
      f"({compiled_seconds / STEPS * 1e6:.0f} µs/step, compile included), loss {float(losses[-1]):.4f}")
print(f"y ≈ {a.numpy()}x + {b.numpy()}")'''),
    ("md", """\
## The fitted line and the loss curve"""),
    ("code", '''\
losses = np.array([float(loss) for loss in losses])
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.scatter(x_np, y_np, s=4, alpha=0.4, label="data")
line = np.linspace(-1.0, 1.0, 2)
left.plot(line, a.numpy() * line + b.numpy(), "r", label=f"fit: y = {a.numpy():.2f}x + {b.numpy():.2f}")
left.plot(line, 10.0 * line + 5.0, "k--", lw=1, label="true: y = 10x + 5")
left.set(xlabel="x", ylabel="y", title="data and fitted line")
left.legend()
right.plot(np.arange(len(losses)), losses)
right.axvline(EAGER_STEPS + 2, color="gray", ls=":", label="eager | compiled")
right.set(xlabel="step", ylabel="mean squared error", yscale="log", title="loss")
right.legend()
plt.show()'''),
]


# ---------------------------------------------------------------------------------------
POLYNOMIAL_REGRESSION = [
    ("md", """\
# Polynomial regression: `y = a·x² + b·x + c`

Three trainable Variables in an `mk.Module`, mean squared error, and plain gradient descent
with `assign_sub`, one compiled (`mk.function`) step per epoch over the whole data.

Set `MINIKERAS_QUICK=1` for a short run (1,000 epochs instead of 10,000).
The same program as a script: `python examples/polynomial_regression.py`."""),
    ("code", SETUP + '''
EPOCHS = 1_000 if QUICK else 10_000
TRUE_COEFFICIENTS = (3.0, -2.0, 1.0)  # y = 3x² - 2x + 1'''),
    ("md", """\
## The data"""),
    ("code", '''\
rng = np.random.default_rng(0)
x_np = rng.uniform(-2.0, 2.0, 200).astype(np.float32)
true_a, true_b, true_c = TRUE_COEFFICIENTS
y_np = (true_a * x_np ** 2 + true_b * x_np + true_c + rng.normal(0.0, 0.5, 200)).astype(np.float32)
x, y = mk.constant(x_np), mk.constant(y_np)'''),
    ("md", """\
## The model

An `mk.Module` tracks the Variables assigned to it: `model.trainable_variables` lists them."""),
    ("code", '''\
class Polynomial(mk.Module):
    """a·x² + b·x + c with trainable coefficients."""

    def __init__(self):
        super().__init__()
        self.a = mk.Variable(0.0, name="a")
        self.b = mk.Variable(0.0, name="b")
        self.c = mk.Variable(0.0, name="c")

    def __call__(self, x):
        return self.a * x * x + self.b * x + self.c


model = Polynomial()
[v.name for v in model.trainable_variables]'''),
    ("md", """\
## Training: one compiled gradient-descent step per epoch"""),
    ("code", '''\
learning_rate = 0.01


@mk.function
def train_epoch(x, y):
    with mk.GradientTape() as tape:
        loss = mk.reduce_mean(mk.square(model(x) - y))
    gradients = tape.gradient(loss, model.trainable_variables)
    for variable, gradient in zip(model.trainable_variables, gradients):
        variable.assign_sub(gradient * learning_rate)
    return loss


start = time.perf_counter()
losses = [train_epoch(x, y) for _ in range(EPOCHS)]
losses = np.array([float(loss) for loss in losses])
a, b, c = (float(v.numpy()) for v in (model.a, model.b, model.c))
print(f"{EPOCHS} epochs in {time.perf_counter() - start:.2f} s, final loss {losses[-1]:.4f}")
print(f"fitted: y ≈ {a:.4f}x² {b:+.4f}x {c:+.4f}")
print(f"true:   y = {true_a}x² {true_b:+}x {true_c:+}")'''),
    ("md", """\
## Data and fit"""),
    ("code", '''\
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.scatter(x_np, y_np, s=6, alpha=0.5, label="data")
grid = np.linspace(-2.0, 2.0, 200)
left.plot(grid, a * grid ** 2 + b * grid + c, "r", label=f"fit: {a:.2f}x² {b:+.2f}x {c:+.2f}")
left.plot(grid, true_a * grid ** 2 + true_b * grid + true_c, "k--", lw=1, label="true: 3x² - 2x + 1")
left.set(xlabel="x", ylabel="y", title="data and fitted polynomial")
left.legend()
right.plot(np.arange(1, EPOCHS + 1), losses)
right.set(xlabel="epoch", ylabel="mean squared error", yscale="log", title="loss")
plt.show()'''),
]


# ---------------------------------------------------------------------------------------
MNIST_MLP = [
    ("md", """\
# MNIST with a multilayer perceptron and a custom training loop

TensorFlow 2's "advanced quickstart", with `tf.` renamed to `mk.`: an `mk.Module` subclass,
Adam, categorical cross-entropy from logits on one-hot labels, `Dataset.shuffle(10000).batch(64)`
and a GradientTape step compiled with `@mk.function`. The tutorial reaches 0.9742 test accuracy
after 5 epochs.

MNIST is read from `$MINIKERAS_DATASETS/mnist/` (or downloaded once into `~/.minikeras`).
Set `MINIKERAS_QUICK=1` for a short run: 1 epoch on 1,024 training images, tested on 2,000.
The same program as a script: `python examples/mnist_mlp.py`."""),
    ("code", SETUP + '''
EPOCHS = 1 if QUICK else 5
TRAIN_SUBSET = 1024 if QUICK else None  # 16 batches of 64
TEST_SUBSET = 2000 if QUICK else None
CLIP_NORM = None  # e.g. 1.0 to clip the gradients by their global norm
mk.random.set_seed(0)'''),
    ("md", """\
## The data

Images scaled to [0, 1]; training labels one-hot encoded for `CategoricalCrossentropy`."""),
    ("code", '''\
(x_train, y_train), (x_test, y_test) = mk.datasets.mnist.load_data()
x_train, y_train = x_train[:TRAIN_SUBSET], y_train[:TRAIN_SUBSET]
x_test, y_test = x_test[:TEST_SUBSET], y_test[:TEST_SUBSET]
x_train = x_train.astype(np.float32) / 255.0
x_test = x_test.astype(np.float32) / 255.0
y_train = np.eye(10, dtype=np.float32)[y_train]
train_ds = mk.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000, seed=0).batch(64)
print(f"train {x_train.shape}, labels {y_train.shape}; test {x_test.shape}")'''),
    ("md", """\
## The model: an `mk.Module` subclass

Layers assigned as attributes are tracked; their weights are created on the first call."""),
    ("code", '''\
class MLP(mk.Module):
    """Flatten -> Dense(128, relu) -> Dense(10) logits."""

    def __init__(self):
        super().__init__()
        self.flatten = mk.layers.Flatten()
        self.hidden = mk.layers.Dense(128, activation="relu")
        self.logits = mk.layers.Dense(10)

    def __call__(self, x):
        return self.logits(self.hidden(self.flatten(x)))


model = MLP()
optimizer = mk.optimizers.Adam(learning_rate=1e-3)
loss_fn = mk.losses.CategoricalCrossentropy(from_logits=True)'''),
    ("md", """\
## The training step

The whole step (forward, tape, gradients, optional clipping, Adam update) is one compiled XLA
program; the weights and Adam's slots are created on the first call."""),
    ("code", '''\
@mk.function
def train_step(images, labels):
    with mk.GradientTape() as tape:
        loss = loss_fn(labels, model(images))
    gradients = tape.gradient(loss, model.trainable_variables)
    if CLIP_NORM is not None:
        gradients, _ = mk.clip_by_global_norm(gradients, CLIP_NORM)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


@mk.function
def predict(images):
    return mk.argmax(model(images), axis=1)


def test_accuracy(batch_size=1000):
    correct = 0
    for i in range(0, len(x_test), batch_size):
        correct += int(np.sum(predict(x_test[i:i + batch_size]).numpy() == y_test[i:i + batch_size]))
    return correct / len(x_test)'''),
    ("md", """\
## The loop"""),
    ("code", '''\
batch_losses, epoch_losses, accuracies = [], [], []
start = time.perf_counter()
for epoch in range(EPOCHS):
    epoch_loss = mk.metrics.Mean()
    for images, labels in train_ds:
        loss = train_step(images, labels)
        epoch_loss.update_state(loss)
        batch_losses.append(loss)
    epoch_losses.append(float(epoch_loss.result()))
    accuracies.append(test_accuracy())
    print(f"epoch {epoch + 1}: loss {epoch_losses[-1]:.4f}, test accuracy {accuracies[-1]:.4f} "
          f"({time.perf_counter() - start:.1f} s)")
batch_losses = np.array([float(loss) for loss in batch_losses])'''),
    ("md", """\
## Training curves"""),
    ("code", '''\
steps_per_epoch = len(batch_losses) // EPOCHS
epoch_ends = steps_per_epoch * np.arange(1, EPOCHS + 1)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.plot(np.arange(1, len(batch_losses) + 1), batch_losses, alpha=0.4, label="batch")
left.plot(epoch_ends, epoch_losses, "o-", label="epoch mean")
left.set(xlabel="step", ylabel="cross-entropy", yscale="log", title="training loss")
left.legend()
right.plot(np.arange(1, EPOCHS + 1), accuracies, "o-")
right.set(xlabel="epoch", ylabel="accuracy", title=f"test accuracy (final {accuracies[-1]:.4f})")
plt.show()'''),
]


# ---------------------------------------------------------------------------------------
MNIST_CNN = [
    ("md", """\
# MNIST with the classic Keras convnet

`Conv2D(32) -> Conv2D(64) -> MaxPooling2D -> Dropout(0.25) -> Flatten -> Dense(128) -> Dropout(0.5)
-> Dense(10, softmax)`, Adam, sparse categorical cross-entropy, batch 128, trained two ways:
a custom GradientTape step compiled with `mk.function`, then `model.compile` + `model.fit`.
The Keras example reaches about 0.99 test accuracy.

Set `MINIKERAS_QUICK=1` for a short run: 1 epoch on 1,024 training images, tested on 500.
The same program as a script: `python examples/mnist_cnn.py [--mode fit]`."""),
    ("code", SETUP + '''
EPOCHS = 1 if QUICK else 3
TRAIN_SUBSET = 1024 if QUICK else None  # 8 batches of 128
TEST_SUBSET = 500 if QUICK else None
BATCH_SIZE = 128
mk.random.set_seed(0)'''),
    ("md", """\
## The data: images of shape (28, 28, 1) in [0, 1], integer labels"""),
    ("code", '''\
(x_train, y_train), (x_test, y_test) = mk.datasets.mnist.load_data()
x_train, y_train = x_train[:TRAIN_SUBSET], y_train[:TRAIN_SUBSET]
x_test, y_test = x_test[:TEST_SUBSET], y_test[:TEST_SUBSET]
x_train = (x_train.astype(np.float32) / 255.0)[..., None]
x_test = (x_test.astype(np.float32) / 255.0)[..., None]
y_train, y_test = y_train.astype(np.int32), y_test.astype(np.int32)
print(f"train {x_train.shape}, test {x_test.shape}")'''),
    ("md", """\
## The model"""),
    ("code", '''\
def build_model():
    return mk.Sequential([
        mk.Input(shape=(28, 28, 1)),
        mk.layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        mk.layers.Conv2D(64, (3, 3), activation="relu"),
        mk.layers.MaxPooling2D(pool_size=(2, 2)),
        mk.layers.Dropout(0.25),
        mk.layers.Flatten(),
        mk.layers.Dense(128, activation="relu"),
        mk.layers.Dropout(0.5),
        mk.layers.Dense(10, activation="softmax"),
    ])


model = build_model()
model.summary()'''),
    ("md", """\
## 1. A custom GradientTape step

`training=True` turns dropout on; `mk.function` compiles forward, backward and the Adam update
into one program, drawing fresh dropout masks on every call."""),
    ("code", '''\
optimizer = mk.optimizers.Adam(learning_rate=1e-3)
loss_fn = mk.losses.SparseCategoricalCrossentropy()
train_ds = mk.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train), seed=0).batch(BATCH_SIZE)


@mk.function
def train_step(images, labels):
    with mk.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_fn(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


@mk.function
def predict(images):
    return mk.argmax(model(images, training=False), axis=1)


def test_accuracy(predict, batch_size=1000):
    correct = sum(int(np.sum(predict(x_test[i:i + batch_size]).numpy() == y_test[i:i + batch_size]))
                  for i in range(0, len(x_test), batch_size))
    return correct / len(x_test)


tape_losses, tape_accuracies = [], []
start = time.perf_counter()
for epoch in range(EPOCHS):
    for images, labels in train_ds:
        tape_losses.append(train_step(images, labels))
    tape_accuracies.append(test_accuracy(predict))
    print(f"epoch {epoch + 1}/{EPOCHS}: loss {float(tape_losses[-1]):.4f}, "
          f"test accuracy {tape_accuracies[-1]:.4f}, {time.perf_counter() - start:.1f} s")
tape_losses = np.array([float(loss) for loss in tape_losses])'''),
    ("md", """\
## 2. The same model with `model.fit`

`fit` compiles its own training step with `mk.function`; `validation_data` gives the test
accuracy after every epoch in `history.history`."""),
    ("code", '''\
fit_model = build_model()
fit_model.compile(optimizer=mk.optimizers.Adam(learning_rate=1e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
start = time.perf_counter()
history = fit_model.fit(x_train, y_train, batch_size=BATCH_SIZE, epochs=EPOCHS,
                        validation_data=(x_test, y_test), verbose=2)
print(f"fit: {time.perf_counter() - start:.1f} s")
test_loss, test_acc = fit_model.evaluate(x_test, y_test, batch_size=1000, verbose=0)
print(f"test loss {test_loss:.4f}, test accuracy {test_acc:.4f}")'''),
    ("md", """\
## Training curves

Per-batch loss of the tape loop, per-epoch loss of `fit`, and test accuracy after each epoch."""),
    ("code", '''\
steps_per_epoch = len(tape_losses) // EPOCHS
epochs = np.arange(1, EPOCHS + 1)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.plot(np.arange(1, len(tape_losses) + 1), tape_losses, alpha=0.6, label="tape loop (batch)")
left.plot(epochs * steps_per_epoch, history.history["loss"], "o-", label="fit (epoch mean)")
left.set(xlabel="step", ylabel="cross-entropy", yscale="log", title="training loss")
left.legend()
right.plot(epochs, tape_accuracies, "o-", label="tape loop")
right.plot(epochs, history.history["val_accuracy"], "s--", label="fit")
right.set(xlabel="epoch", ylabel="accuracy", title="test accuracy")
right.legend()
plt.show()'''),
    ("md", """\
## Test digits and their predicted labels

The `fit` model's predictions on the first 32 test images; wrong ones in red, with the true
label."""),
    ("code", '''\
probabilities = fit_model.predict(x_test[:32], verbose=0)
predicted = np.argmax(np.asarray(probabilities), axis=1)
fig, axes = plt.subplots(4, 8, figsize=(10, 5.6))
for ax, image, label, guess in zip(axes.flat, x_test, y_test, predicted):
    ax.imshow(image[..., 0], cmap="gray_r")
    ok = guess == label
    ax.set_title(f"{guess}" if ok else f"{guess} (true {label})", color="black" if ok else "red", fontsize=9)
    ax.axis("off")
fig.suptitle(f"predicted labels: {np.sum(predicted == y_test[:32])}/32 right")
plt.tight_layout()
plt.show()'''),
]


# ---------------------------------------------------------------------------------------
GRADIENT_TAPE_TOUR = [
    ("md", """\
# A tour of `mk.GradientTape`

Every feature of the tape, each with its real output: what is watched, persistent and nested
tapes, pausing and resetting, Jacobians, stopping and customising gradients, why a gradient is
`None`, and tapes inside compiled functions. Everything is written as in TensorFlow 2, with
`tf.` renamed to `mk.`."""),
    ("code", '''\
import os
import time

import numpy as np

import minikeras as mk

QUICK = os.environ.get("MINIKERAS_QUICK") == "1"  # fewer timing steps at the end'''),
    ("md", """\
## `watch`: gradients with respect to a tensor

A tape records operations on what it watches. Constants are not watched unless you say so."""),
    ("code", '''\
x = mk.constant(3.0)
with mk.GradientTape() as tape:
    tape.watch(x)
    y = x * x
tape.gradient(y, x)  # dy/dx = 2x'''),
    ("md", """\
## Trainable Variables are watched automatically

Reading a trainable `mk.Variable` inside the `with` block is enough. A non-trainable one is
not watched, so its gradient is `None`. `sources` can be any nest of lists, tuples and dicts;
the answer has the same structure."""),
    ("code", '''\
w = mk.Variable([[1.0], [2.0]], name="w")
b = mk.Variable(0.5, name="b")
frozen = mk.Variable(10.0, trainable=False, name="frozen")
x = mk.constant([[3.0, 4.0]])
with mk.GradientTape() as tape:
    y = mk.matmul(x, w) + b + frozen
    loss = mk.reduce_sum(y ** 2)
print("watched:", [v.name for v in tape.watched_variables()])
tape.gradient(loss, {"w": w, "b": b, "frozen": frozen})'''),
    ("md", """\
## `watch_accessed_variables=False`: only what you watch

Useful to differentiate with respect to a few Variables of a big model."""),
    ("code", '''\
with mk.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(b)
    y = mk.reduce_sum(mk.matmul(x, w)) * b
tape.gradient(y, [w, b])  # w was read but not watched'''),
    ("md", """\
## `persistent=True`: several gradients from one recording

A tape releases what it recorded after one `gradient` call; a second call is an error. A
persistent tape keeps its records until it is dropped or `reset()`."""),
    ("code", '''\
x = mk.constant(3.0)
with mk.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = x * x
    z = y * y
print(tape.gradient(z, x))  # 4x³ = 108
print(tape.gradient(y, x))  # 2x = 6
del tape  # releases the records

with mk.GradientTape() as tape:
    tape.watch(x)
    y = x * x
tape.gradient(y, x)
try:
    tape.gradient(y, x)
except RuntimeError as error:
    print("RuntimeError:", error)'''),
    ("md", """\
## Nested tapes: higher derivatives

Gradient rules are themselves recorded ops, so an outer tape records the inner tape's backward
pass. For `y = x³` at `x = 3`: `3x² = 27`, `6x = 18`, `6`."""),
    ("code", '''\
x = mk.Variable(3.0)
with mk.GradientTape() as t3:
    with mk.GradientTape() as t2:
        with mk.GradientTape() as t1:
            y = x ** 3
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
d3y_dx3 = t3.gradient(d2y_dx2, x)
print(dy_dx, d2y_dx2, d3y_dx3, sep="\\n")'''),
    ("md", """\
## `stop_recording`: computations the tape should not see

Inside `with tape.stop_recording():` nothing is recorded, so what is computed there is a
constant to the tape."""),
    ("code", '''\
x = mk.constant(2.0)
with mk.GradientTape() as tape:
    tape.watch(x)
    y = x * x
    with tape.stop_recording():
        z = y * 100.0  # not recorded
    total = y + z
print(total)
tape.gradient(total, x)  # only d(x²)/dx = 4; z counts as a constant'''),
    ("md", """\
## `reset`: start the recording over

`reset()` forgets everything recorded and watched so far (and releases its memory)."""),
    ("code", '''\
with mk.GradientTape(persistent=True) as tape:
    tape.watch(x)
    first_try = x ** 3
    tape.reset()  # forget first_try
    tape.watch(x)
    y = x * 5.0
print(tape.gradient(y, x))
print(tape.gradient(first_try, x))  # recorded before the reset: gone'''),
    ("md", """\
## `jacobian`

The full Jacobian, `target.shape + source.shape`, computed with one vectorised backward pass.
For the softmax it is `diag(s) - s sᵀ`:"""),
    ("code", '''\
x = mk.constant([1.0, 2.0, 3.0])
with mk.GradientTape() as tape:
    tape.watch(x)
    s = mk.nn.softmax(x)
J = tape.jacobian(s, x)
print(J)
s = s.numpy()
print("equals diag(s) - s sᵀ:", np.allclose(J.numpy(), np.diag(s) - np.outer(s, s), atol=1e-6))'''),
    ("md", """\
A Hessian is the Jacobian of a gradient: nest two tapes. For `f = Σ xᵢ³` it is `diag(6x)`."""),
    ("code", '''\
with mk.GradientTape() as outer:
    outer.watch(x)
    with mk.GradientTape() as inner:
        inner.watch(x)
        f = mk.reduce_sum(x ** 3)
    g = inner.gradient(f, x)
outer.jacobian(g, x)'''),
    ("md", """\
## `batch_jacobian`: one Jacobian per example

When row `i` of the output depends only on row `i` of the input (any layer applied to a
batch), `batch_jacobian` gives the `(batch, out, in)` Jacobians without the zeros between
examples."""),
    ("code", '''\
layer = mk.layers.Dense(2, activation="tanh")
xb = mk.constant(np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32))
with mk.GradientTape() as tape:
    tape.watch(xb)
    yb = layer(xb)
jacobians = tape.batch_jacobian(yb, xb)
print(jacobians.shape)
jacobians[0]'''),
    ("md", """\
## `stop_gradient`

The value passes through; the gradient does not. In `x * stop_gradient(x)` the second factor is a
constant to the tape, so the gradient is `x`, not `2x`."""),
    ("code", '''\
x = mk.constant(3.0)
with mk.GradientTape() as tape:
    tape.watch(x)
    y = x * mk.stop_gradient(x)
tape.gradient(y, x)'''),
    ("md", """\
## `custom_gradient`

The decorated function returns its result and a function from the upstream gradient to one
gradient per input. First, a numerically stable gradient for `log(1 + eˣ)`: at `x = 100` the
automatic gradient `eˣ / (1 + eˣ)` is `inf / inf = nan`."""),
    ("code", '''\
@mk.custom_gradient
def log1pexp(x):
    e = mk.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return mk.math.log(1 + e), grad


x = mk.constant(100.0)
with mk.GradientTape(persistent=True) as tape:
    tape.watch(x)
    naive = mk.math.log(1 + mk.exp(x))
    stable = log1pexp(x)
print("automatic:", tape.gradient(naive, x))
print("custom:   ", tape.gradient(stable, x))'''),
    ("md", """\
Gradient clipping in the backward pass only: the forward value is unchanged, and the
gradient flowing back through `clip_gradients` is clipped to norm 0.5."""),
    ("code", '''\
@mk.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return mk.clip_by_norm(dy, 0.5)
    return y, backward


v = mk.Variable(2.0)
with mk.GradientTape() as tape:
    output = clip_gradients(v * v)
tape.gradient(output, v)  # 2v · clip(1.0) = 4 · 0.5 = 2'''),
    ("md", """\
A gradient function must return one gradient per input; a wrong count says how many were
expected."""),
    ("code", '''\
@mk.custom_gradient
def product(x, y):
    return x * y, lambda upstream: upstream * y  # forgot the gradient for y


p, q = mk.constant(1.0), mk.constant(2.0)
with mk.GradientTape() as tape:
    tape.watch([p, q])
    r = product(p, q)
try:
    tape.gradient(r, [p, q])
except ValueError as error:
    print("ValueError:", error)'''),
    ("md", """\
## `unconnected_gradients`: `'none'`, `'zero'`, and `'raise'`, which says why

A source the target does not depend on gets `None` by default, `0` with `'zero'`, and with
`'raise'` a `ValueError` that names each such source and the reason: never watched, an integer
dtype, or a path through a non-differentiable op such as `round`."""),
    ("code", '''\
scale = mk.Variable(1.5, name="scale")  # used only through mk.round
bias = mk.Variable(2.0, name="bias")    # not used while recording
count = mk.constant(3)                  # an integer
offset = mk.constant(4.0)               # watched and used: has a gradient
with mk.GradientTape(persistent=True) as tape:
    tape.watch(offset)
    z = mk.round(scale) * offset + mk.cast(count, mk.float32)
sources = [bias, count, scale, offset]
print("none:", tape.gradient(z, sources))
print("zero:", tape.gradient(z, sources, unconnected_gradients="zero"))
try:
    tape.gradient(z, sources, unconnected_gradients="raise")
except ValueError as error:
    print("raise:", error)'''),
    ("md", """\
## `mk.function` with a tape inside

A training step with a tape compiles into one XLA program: the Variable `w` becomes an input and
an output of the program. It is traced once per input signature."""),
    ("code", '''\
w = mk.Variable(5.0, name="w")


def step(x, y):
    with mk.GradientTape() as tape:
        loss = mk.reduce_mean(mk.square(w * x - y))
    w.assign_sub(0.1 * tape.gradient(loss, w))
    return loss


compiled_step = mk.function(step)
x = mk.constant([1.0, 2.0, 3.0])
y = 2.0 * x
for i in range(3):
    print(f"step {i}: loss {float(compiled_step(x, y)):.6f}, w = {w.numpy():.6f}")
print("traced", compiled_step.experimental_get_tracing_count(), "time(s)")'''),
    ("code", '''\
steps = 200 if QUICK else 2000
for name, fn in (("eager", step), ("compiled", compiled_step)):
    w.assign(5.0)
    fn(x, y)  # warm up
    start = time.perf_counter()
    for _ in range(steps):
        loss = fn(x, y)
    float(loss)
    print(f"{name:>8}: {(time.perf_counter() - start) / steps * 1e6:7.1f} µs/step, w = {w.numpy():.4f}")'''),
    ("md", """\
## `mk.cond`: branching on a tensor inside `mk.function`

While tracing, a tensor's value is unknown, so a Python `if` on it cannot work; the error
says what to use instead."""),
    ("code", '''\
@mk.function
def python_if(x):
    if x > 0:
        return x * x
    return -3.0 * x


try:
    python_if(mk.constant(2.0))
except TypeError as error:
    print("TypeError:", error)'''),
    ("md", """\
`mk.cond(pred, true_fn, false_fn)` works eagerly and compiled, and is differentiable:"""),
    ("code", '''\
@mk.function
def value_and_gradient(x):
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.cond(x > 0, lambda: x * x, lambda: -3.0 * x)
    return y, tape.gradient(y, x)


for value in (2.0, -2.0):
    y, dy_dx = value_and_gradient(mk.constant(value))
    print(f"x = {value:+}: y = {float(y)}, dy/dx = {float(dy_dx)}")'''),
]


NOTEBOOKS = {
    "linear_regression.ipynb": LINEAR_REGRESSION,
    "polynomial_regression.ipynb": POLYNOMIAL_REGRESSION,
    "mnist_mlp.ipynb": MNIST_MLP,
    "mnist_cnn.ipynb": MNIST_CNN,
    "gradient_tape_tour.ipynb": GRADIENT_TAPE_TOUR,
}
KEEP_OUTPUTS = {"gradient_tape_tour.ipynb"}  # small text outputs, committed

METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def build(cells, name):
    """A fresh notebook of ``cells`` ([("md" | "code", source), ...]) without outputs."""
    nb = nbformat.v4.new_notebook(metadata=METADATA)
    for i, (kind, source) in enumerate(cells):
        make = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
        nb.cells.append(make(source, id=f"{Path(name).stem}-{i}"))
    return nb


def sources(nb):
    return [(cell.cell_type, cell.source) for cell in nb.cells]


def execute(nb, cwd, quick=False):
    """Runs ``nb`` in a python3 kernel; returns it with outputs, minus timing metadata."""
    from nbclient import NotebookClient

    env = os.environ.copy()
    env["MPLBACKEND"] = "Agg"
    if quick:
        env["MINIKERAS_QUICK"] = "1"
    else:
        env.pop("MINIKERAS_QUICK", None)
    client = NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(cwd)}},
                            record_timing=False)
    client.execute(env=env)
    return nb


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the notebooks match their cells")
    parser.add_argument("--execute", action="store_true", help="re-run the tour to refresh its committed outputs")
    args = parser.parse_args(argv)
    stale = []
    for name, cells in NOTEBOOKS.items():
        path = HERE / name
        nb = build(cells, name)
        old = nbformat.read(path, as_version=4) if path.exists() else None
        if args.check:
            if old is None or sources(old) != sources(nb):
                stale.append(name)
            continue
        if name in KEEP_OUTPUTS:
            if args.execute:
                nb = execute(nb, HERE)
            elif old is not None and sources(old) == sources(nb):
                nb = old  # keep its outputs
        nbformat.validate(nb)
        nbformat.write(nb, path)
        print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    if stale:
        print("out of date (run python examples/make_notebooks.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""MNIST with a multilayer perceptron and a custom training loop.

The TF 2 "advanced quickstart" program, renamed to minikeras: an ``mk.Module`` subclass
(Flatten -> Dense(128, relu) -> Dense(10) logits), Adam(1e-3), categorical cross-entropy
from logits on one-hot labels, ``Dataset.shuffle(10000).batch(64)``, a compiled
(``@mk.function``) GradientTape step, 5 epochs. The tutorial reaches 0.9742 test accuracy.

    python examples/mnist_mlp.py
    python examples/mnist_mlp.py --clip-norm 1.0        # clip gradients by global norm
    python examples/mnist_mlp.py --epochs 1 --subset 5000
"""
import argparse
import time

import numpy as np

import minikeras as mk


class MLP(mk.Module):
    """Flatten -> Dense(128, relu) -> Dense(10) logits."""

    def __init__(self):
        super().__init__()
        self.flatten = mk.layers.Flatten()
        self.hidden = mk.layers.Dense(128, activation="relu")
        self.logits = mk.layers.Dense(10)

    def __call__(self, x):
        return self.logits(self.hidden(self.flatten(x)))


def load(subset=None):
    """MNIST scaled to [0, 1], with one-hot training labels."""
    (x_train, y_train), (x_test, y_test) = mk.datasets.mnist.load_data()
    if subset:
        x_train, y_train = x_train[:subset], y_train[:subset]
    x_train = x_train.astype(np.float32) / 255.0
    x_test = x_test.astype(np.float32) / 255.0
    return (x_train, np.eye(10, dtype=np.float32)[y_train]), (x_test, y_test)


def train(epochs=5, batch_size=64, clip_norm=None, subset=None, seed=0, log=print):
    """Trains the MLP; returns (model, test accuracy, per-epoch losses)."""
    mk.random.set_seed(seed)
    (x_train, y_train), (x_test, y_test) = load(subset)
    model = MLP()
    optimizer = mk.optimizers.Adam(learning_rate=1e-3)
    loss_fn = mk.losses.CategoricalCrossentropy(from_logits=True)
    train_ds = mk.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000, seed=seed).batch(batch_size)

    @mk.function
    def train_step(images, labels):
        with mk.GradientTape() as tape:
            loss = loss_fn(labels, model(images))
        gradients = tape.gradient(loss, model.trainable_variables)
        if clip_norm is not None:
            gradients, _ = mk.clip_by_global_norm(gradients, clip_norm)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    predict = mk.function(lambda images: mk.argmax(model(images), axis=1))
    losses = []
    start = time.perf_counter()
    for epoch in range(epochs):
        epoch_loss = mk.metrics.Mean()
        for images, labels in train_ds:
            epoch_loss.update_state(train_step(images, labels))
        losses.append(float(epoch_loss.result()))
        accuracy = evaluate(predict, x_test, y_test)
        log(f"epoch {epoch + 1}: loss {losses[-1]:.4f}, test accuracy {accuracy:.4f} "
            f"({time.perf_counter() - start:.1f} s)")
    return model, accuracy, losses


def evaluate(predict, x, y, batch_size=1000):
    """Fraction of correct predictions."""
    correct = 0
    for start in range(0, len(x), batch_size):
        correct += int(np.sum(predict(x[start:start + batch_size]).numpy() == y[start:start + batch_size]))
    return correct / len(x)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--clip-norm", type=float, default=None, help="clip gradients by this global norm")
    parser.add_argument("--subset", type=int, default=None, help="train on the first N examples only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    _, accuracy, _ = train(args.epochs, args.batch_size, args.clip_norm, args.subset, args.seed)
    print(f"test accuracy {accuracy:.4f} (tutorial: 0.9742); wall time {time.perf_counter() - start:.1f} s")
    return accuracy


if __name__ == "__main__":
    main()

"""Adversarial examples with the fast gradient sign method (Goodfellow et al., 2015) on the MNIST CNN.

The gradient of the loss with respect to the *input image*, taken with a GradientTape that
watches the images, gives the direction that increases the loss fastest under a max-norm
bound: ``x_adv = clip(x + eps * sign(dL/dx), 0, 1)``. One tape per batch of 1,000 test images,
in one compiled ``mk.function`` (``eps`` is an argument, so one program serves every eps).

Printed: test accuracy for eps in {0, 0.05, ..., 0.3}. With ``--figures DIR``: the accuracy
curve and a grid of originals and adversarials with their predictions (PNG).

    python examples/fgsm.py                                  # trains the CNN for 1 epoch first
    python examples/fgsm.py --weights /tmp/mnist_cnn.weights.h5   # reuse (or save) its weights
    MINIKERAS_QUICK=1 python examples/fgsm.py                # a short run
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import minikeras as mk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cnn_classifier import classifier

EPSILONS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


def make_attack(model):
    """``attack(images, labels, eps) -> (adversarial images, their predicted labels)``, compiled."""
    loss_fn = mk.losses.SparseCategoricalCrossentropy()

    @mk.function
    def attack(images, labels, eps):
        with mk.GradientTape() as tape:
            tape.watch(images)
            loss = loss_fn(labels, model(images, training=False))
        gradient = tape.gradient(loss, images)
        adversarial = mk.clip_by_value(images + eps * mk.sign(gradient), 0.0, 1.0)
        return adversarial, mk.argmax(model(adversarial, training=False), axis=1)

    return attack


def accuracy_under_attack(attack, x, y, epsilons=EPSILONS, batch_size=1000):
    """{eps: test accuracy on the adversarial images}."""
    result = {}
    for eps in epsilons:
        eps_value = np.float32(eps)
        correct = 0
        for i in range(0, len(x), batch_size):
            _, predicted = attack(x[i:i + batch_size], y[i:i + batch_size], eps_value)
            correct += int(np.sum(predicted.numpy() == y[i:i + batch_size]))
        result[eps] = correct / len(x)
    return result


def plot_accuracy(accuracies, path=None):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    ax.plot(list(accuracies), list(accuracies.values()), "o-")
    ax.set(xlabel="epsilon", ylabel="test accuracy", title="FGSM on the MNIST CNN", ylim=(0, 1.02))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=80)
    return fig


def plot_grid(attack, x, y, epsilons=(0.0, 0.1, 0.2, 0.3), count=8, path=None):
    """Rows: the first ``count`` test images at each eps, titled with the predicted label."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(epsilons), count, figsize=(count * 0.95, len(epsilons) * 1.15))
    for row, eps in zip(axes, epsilons):
        images, predicted = attack(x[:count], y[:count], np.float32(eps))
        for ax, image, guess, label in zip(row, images.numpy(), predicted.numpy(), y[:count]):
            ax.imshow(image[..., 0], cmap="gray_r", vmin=0, vmax=1)
            ax.set_title(str(guess), color="black" if guess == label else "red", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
        row[0].set_ylabel(f"eps {eps:g}", fontsize=9)
    fig.suptitle("FGSM: predictions (red: wrong)", fontsize=10)
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=60)
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default=None, help="CNN weights: loaded if the file exists, else saved there")
    parser.add_argument("--epochs", type=float, default=1.0, help="CNN training epochs when no weights are loaded")
    parser.add_argument("--subset", type=int, default=None, help="train the CNN on the first N images only")
    parser.add_argument("--test-subset", type=int, default=None, help="attack the first N test images only")
    parser.add_argument("--figures", default=None, help="a folder to write fgsm_accuracy.png and fgsm_grid.png")
    args = parser.parse_args(argv)
    if os.environ.get("MINIKERAS_QUICK") == "1":
        args.subset, args.test_subset = args.subset or 2048, args.test_subset or 1000
    start = time.perf_counter()
    model, (_, (x_test, y_test)) = classifier(args.weights, args.epochs, args.subset)
    x_test, y_test = x_test[:args.test_subset], y_test[:args.test_subset]
    attack = make_attack(model)
    attack_start = time.perf_counter()
    accuracies = accuracy_under_attack(attack, x_test, y_test)
    attack_seconds = time.perf_counter() - attack_start
    print(f"{'epsilon':>8s}  test accuracy ({len(x_test)} images)")
    for eps, accuracy in accuracies.items():
        print(f"{eps:8.2f}  {accuracy:.4f}")
    print(f"attack: {len(EPSILONS)} x {len(x_test)} images in {attack_seconds:.1f} s (compiling included); "
          f"wall time {time.perf_counter() - start:.1f} s")
    if args.figures:
        os.makedirs(args.figures, exist_ok=True)
        plot_accuracy(accuracies, os.path.join(args.figures, "fgsm_accuracy.png"))
        plot_grid(attack, x_test, y_test, path=os.path.join(args.figures, "fgsm_grid.png"))
    return accuracies


if __name__ == "__main__":
    main()

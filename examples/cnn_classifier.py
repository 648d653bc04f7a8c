"""The MNIST CNN of ``mnist_cnn.py`` (the main job), trained here or loaded from a weights file:
the classifier that ``fgsm.py`` attacks and that ``dcgan.py`` uses to judge its samples.

``classifier(weights=PATH)`` loads ``PATH`` if it exists; otherwise it trains the model with
the tape loop of ``mnist_cnn.py`` and, when ``PATH`` is given, saves the weights there for the
next run.
"""
import os
import sys
import time
from pathlib import Path

import minikeras as mk

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mnist_cnn


def classifier(weights=None, epochs=1.0, subset=None, seed=0, log=print):
    """The trained CNN (softmax outputs) and the MNIST data it was trained on.

    Args:
      weights: a ``.weights.h5`` path; loaded if the file exists, written after training if not.
      epochs, subset, seed: for training (see ``mnist_cnn.py``).

    Returns:
      (model, ((x_train, y_train), (x_test, y_test))) with images in [0, 1], shape (n, 28, 28, 1).
    """
    mk.random.set_seed(seed)
    data = mnist_cnn.load(subset)
    model = mnist_cnn.build_model()
    if weights and os.path.exists(weights):
        model.load_weights(weights)
        log(f"CNN weights loaded from {weights}")
        return model, data
    start = time.perf_counter()
    mnist_cnn.train_with_tape(model, data, epochs, 128, log, start)
    if weights:
        os.makedirs(os.path.dirname(os.path.abspath(weights)), exist_ok=True)
        model.save_weights(weights)
        log(f"CNN weights saved to {weights}")
    return model, data

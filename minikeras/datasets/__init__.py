"""Datasets: ``mnist`` and ``fashion_mnist``, each with ``load_data()`` as in Keras.

Example:
    >>> from minikeras.datasets import mnist
    >>> (x_train, y_train), (x_test, y_test) = mnist.load_data()
"""

from . import fashion_mnist, mnist

__all__ = ["mnist", "fashion_mnist"]

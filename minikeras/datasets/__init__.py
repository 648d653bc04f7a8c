"""Datasets with Keras 3's ``load_data()``: ``mnist``, ``fashion_mnist``, ``cifar10``,
``cifar100``, ``imdb``, ``reuters``, ``boston_housing`` and ``california_housing``.

Files are found in ``$MINIKERAS_DATASETS/<name>/``, then the cache, then downloaded from
Keras's origins and checked against Keras's hashes (``_source``, ``dataset_file``).

Example:
    >>> from minikeras.datasets import mnist
    >>> (x_train, y_train), (x_test, y_test) = mnist.load_data()
"""

from . import boston_housing, california_housing, cifar10, cifar100, fashion_mnist, imdb, mnist, reuters

__all__ = ["mnist", "fashion_mnist", "cifar10", "cifar100", "imdb", "reuters", "boston_housing", "california_housing"]

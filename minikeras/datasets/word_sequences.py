"""What ``imdb`` and ``reuters`` do to their word-index sequences, in Keras 3's order.

Each sequence is a list of word ranks (1 = the most frequent word). Keras shuffles the
examples with ``np.random.RandomState(seed)``, shifts the ranks by ``index_from`` and puts
``start_char`` in front, drops the sequences of ``maxlen`` words or more, and replaces
(or, with ``oov_char=None``, drops) the words outside ``skip_top <= w < num_words``.
These functions are those steps; the loaders call them in Keras's order, so that the
same file and arguments give the same arrays as Keras.
"""

from __future__ import annotations

import numpy as np


def shuffle(rng: np.random.RandomState, xs: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Permute ``xs`` and ``labels`` together by one ``rng.shuffle`` of their indices."""
    indices = np.arange(len(xs))
    rng.shuffle(indices)
    return xs[indices], labels[indices]


def shift(xs, start_char: int | None, index_from: int) -> list[list[int]]:
    """Add ``index_from`` to every word and put ``start_char`` (unless None) in front."""
    if start_char is not None:
        return [[start_char] + [w + index_from for w in x] for x in xs]
    return [[w + index_from for w in x] for x in xs]


def drop_long(maxlen: int, xs: list, labels) -> tuple[list, list]:
    """Keep the sequences shorter than ``maxlen`` words (Keras's ``remove_long_seq``)."""
    kept = [(x, y) for x, y in zip(xs, labels) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def cut_vocabulary(xs: list, num_words: int | None, skip_top: int, oov_char: int | None) -> list[list[int]]:
    """Replace by ``oov_char`` (or drop, when it is None) each word outside
    ``skip_top <= w < num_words``. ``num_words=None`` (or 0) means the largest word present,
    which, as in Keras, is then itself outside the range."""
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def as_object_array(xs: list) -> np.ndarray:
    """The sequences as Keras returns them: ``np.array(xs, dtype="object")``."""
    return np.array(xs, dtype="object")

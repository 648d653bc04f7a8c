"""IMDB movie reviews (Maas et al., 2011): 25,000 training and 25,000 test reviews labelled by
sentiment, as sequences of word ranks, from Keras's ``imdb.npz``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import numpy as np

from . import safe_pickle, word_sequences
from .dataset_file import dataset_file


def load_data(
    path: str | os.PathLike = "imdb.npz",
    num_words: int | None = None,
    skip_top: int = 0,
    maxlen: int | None = None,
    seed: int = 113,
    start_char: int | None = 1,
    oov_char: int | None = 2,
    index_from: int = 3,
    *,
    mirrors: Sequence[str] | None = None,
    **kwargs,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load IMDB, like ``keras.datasets.imdb.load_data`` (same arguments, defaults, order).

    ``imdb.npz`` (Keras's file, sha256-checked on download) is found as ``dataset_file``
    says: ``path`` is its name in ``$MINIKERAS_DATASETS/imdb/`` and the cache, or a path to it.
    Its ragged arrays are pickled object arrays; they are read with an unpickler that
    rebuilds NumPy arrays only (``safe_pickle``), as Keras 3 does.

    Args:
        path: the file's name (default ``"imdb.npz"``) or a path to it.
        num_words: keep the ``num_words`` most frequent words, others become ``oov_char``;
            None keeps every word but the rarest (Keras's rule).
        skip_top: the most frequent ``skip_top`` word indices also become ``oov_char``.
        maxlen: drop the reviews of ``maxlen`` words or more (start mark included).
        seed: seed of the shuffle of each split (``np.random.RandomState``).
        start_char: the index put before each review; None for none.
        oov_char: the index of words cut out; None drops them.
        index_from: the index of the most frequent word.
        mirrors: base URLs to download from instead of Keras's origin.
        **kwargs: accepted and ignored, as Keras does.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: object arrays of lists of ints and int
        label arrays (1 positive, 0 negative).

    Raises:
        ValueError: no review is shorter than ``maxlen``.
    """
    f = safe_pickle.load_npz(dataset_file("imdb", "imdb.npz", path, mirrors=mirrors))
    rng = np.random.RandomState(seed)
    x_train, labels_train = word_sequences.shuffle(rng, f["x_train"], f["y_train"])
    x_test, labels_test = word_sequences.shuffle(rng, f["x_test"], f["y_test"])
    if start_char is not None or index_from:
        x_train = word_sequences.shift(x_train, start_char, index_from)
        x_test = word_sequences.shift(x_test, start_char, index_from)
    else:
        x_train, x_test = [list(x) for x in x_train], [list(x) for x in x_test]
    if maxlen:
        x_train, labels_train = word_sequences.drop_long(maxlen, x_train, labels_train)
        x_test, labels_test = word_sequences.drop_long(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept. "
                             "Increase maxlen.")
    xs = word_sequences.cut_vocabulary(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    n = len(x_train)
    return (word_sequences.as_object_array(xs[:n]), labels[:n]), (word_sequences.as_object_array(xs[n:]), labels[n:])


def get_word_index(path: str | os.PathLike = "imdb_word_index.json", *,
                   mirrors: Sequence[str] | None = None) -> dict[str, int]:
    """The word → rank dict of IMDB (``keras.datasets.imdb.get_word_index``); rank 1 is the
    most frequent word, found in ``load_data``'s sequences as ``rank + index_from``.

    Example:
        >>> index = {rank + 3: word for word, rank in get_word_index().items()}
    """
    with open(dataset_file("imdb", "imdb_word_index.json", path, mirrors=mirrors)) as f:
        return json.load(f)

"""Reuters newswires (the Reuters-21578 collection): 11,228 wires labelled with 46 topics, as
sequences of word ranks, from Keras's ``reuters.npz``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import numpy as np

from . import safe_pickle, word_sequences
from .dataset_file import dataset_file

LABEL_NAMES = (
    "cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee", "sugar",
    "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx", "interest", "gnp",
    "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock", "retail", "ipi", "iron-steel",
    "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem", "dlr", "gas", "silver", "wpi", "hog", "lead",
)


def load_data(
    path: str | os.PathLike = "reuters.npz",
    num_words: int | None = None,
    skip_top: int = 0,
    maxlen: int | None = None,
    test_split: float = 0.2,
    seed: int = 113,
    start_char: int | None = 1,
    oov_char: int | None = 2,
    index_from: int = 3,
    *,
    mirrors: Sequence[str] | None = None,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load Reuters, like ``keras.datasets.reuters.load_data`` (same arguments, defaults, order).

    ``reuters.npz`` is found as ``dataset_file`` says and read as ``imdb.load_data`` reads
    its file (pickled object arrays through ``safe_pickle``). The wires are shuffled
    (``np.random.RandomState(seed)``), shifted, filtered and cut as IMDB's, then the first
    ``int(n * (1 - test_split))`` are the training split.

    Args:
        path: the file's name (default ``"reuters.npz"``) or a path to it.
        num_words, skip_top, maxlen, seed, start_char, oov_char, index_from: as in
            ``imdb.load_data``.
        test_split: the fraction of wires kept for testing.
        mirrors: base URLs to download from instead of Keras's origin.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: object arrays of lists of ints and int
        topic labels (``get_label_names()[label]``).
    """
    f = safe_pickle.load_npz(dataset_file("reuters", "reuters.npz", path, mirrors=mirrors))
    xs, labels = word_sequences.shuffle(np.random.RandomState(seed), f["x"], f["y"])
    if start_char is not None or index_from:
        xs = word_sequences.shift(xs, start_char, index_from)
    if maxlen:
        xs, labels = word_sequences.drop_long(maxlen, xs, labels)
    xs = word_sequences.cut_vocabulary(xs, num_words, skip_top, oov_char)
    n = int(len(xs) * (1 - test_split))
    return ((word_sequences.as_object_array(xs[:n]), np.array(labels[:n])),
            (word_sequences.as_object_array(xs[n:]), np.array(labels[n:])))


def get_word_index(path: str | os.PathLike = "reuters_word_index.json", *,
                   mirrors: Sequence[str] | None = None) -> dict[str, int]:
    """The word → rank dict of Reuters (``keras.datasets.reuters.get_word_index``); rank 1 is
    the most frequent word, found in ``load_data``'s sequences as ``rank + index_from``."""
    with open(dataset_file("reuters", "reuters_word_index.json", path, mirrors=mirrors)) as f:
        return json.load(f)


def get_label_names() -> tuple[str, ...]:
    """The 46 topic names, indexed by label (``keras.datasets.reuters.get_label_names``)."""
    return LABEL_NAMES

"""``mk.data``: input pipelines (``tf.data``'s Dataset, the subset that tutorials use)."""
import types as _types

from minikeras.data._counter import Counter
from minikeras.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset  # noqa: F401
from minikeras.data.text_line import TextLineDataset  # noqa: F401


def _cardinality(dataset):
    return dataset.cardinality()


experimental = _types.SimpleNamespace(AUTOTUNE=AUTOTUNE, Counter=Counter, INFINITE_CARDINALITY=INFINITE_CARDINALITY,
                                      UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY, cardinality=_cardinality)

"""``keras.preprocessing.sequence``: ``pad_sequences``."""
from minikeras.utils.sequence import pad_sequences  # noqa: F401

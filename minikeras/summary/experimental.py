"""``mk.summary.experimental``: the default step, as ``tf.summary.experimental``."""
from minikeras.summary.writer import get_step, set_step  # noqa: F401

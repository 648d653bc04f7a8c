"""``mk.summary``: TensorBoard summaries for custom training loops, as ``tf.summary`` in TF 2.

>>> writer = mk.summary.create_file_writer("logs/train")
>>> with writer.as_default():
...     for step in range(3):
...         mk.summary.scalar("loss", 1.0 / (step + 1), step=step)

Needs the ``tensorboard`` package (``pip install 'minikeras[tensorboard]'``).
"""
from minikeras.summary import experimental  # noqa: F401
from minikeras.summary.ops import histogram, image, scalar, text  # noqa: F401
from minikeras.summary.writer import (  # noqa: F401
    SummaryWriter, create_file_writer, create_noop_writer, flush, record_if, should_record_summaries)

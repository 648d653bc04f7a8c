"""``mk.train``: object-based checkpoints (``tf.train.Checkpoint`` and its manager).

A checkpoint is one HDF5 file, ``<path>.h5``, holding each Variable under its object path
(``net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE``); a directory's ``checkpoint`` text file
names its newest checkpoints, as TensorFlow's does. Files are written atomically.
"""
from minikeras.train.checkpoint import Checkpoint, CheckpointLoadStatus, InitializationOnlyStatus  # noqa: F401
from minikeras.train.manager import CheckpointManager, latest_checkpoint, list_variables, load_variable  # noqa: F401

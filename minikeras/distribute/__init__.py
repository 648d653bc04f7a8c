"""``mk.distribute``: data-parallel training on JAX's sharding (one device to many hosts).

    dp = mk.distribute.DataParallel()             # a 1-D mesh of all devices, axis "batch"
    model.compile("adam", "sparse_categorical_crossentropy", distribution=dp)
    model.fit(x, y, batch_size=256)               # each of 8 devices gets 32 examples

Also ``mk.distribute.set_distribution(dp)`` (for every compiled step) and ``with dp:`` (for a
block, custom ``mk.function`` training loops included). Batches are split on dim 0,
Variables and optimizer slots replicated; the step is one ``jax.jit`` program and XLA
inserts the gradient all-reduce. Results equal single-device training on the same batches.

A batch size that is not a multiple of the device count is a ValueError (use a multiple, and
``Dataset.batch(n, drop_remainder=True)``): padding with a masked loss would change
BatchNormalization statistics and metrics, so minikeras does not pad.

Several hosts: call ``mk.distribute.initialize(coordinator_address, num_processes,
process_id)`` first in every process; each process then feeds its own part of each batch.
See docs/distributed.md.

Keras 3's ``keras.distribution`` (``DeviceMesh``, ``TensorLayout``, ``LayoutMap``,
``ModelParallel``, ``distribute_tensor``...) is these same objects under Keras's names
(``minikeras.keras.distribution``); ``DataParallel`` is one class for both.
"""
from minikeras.distribute.data_parallel import DataParallel, get_distribution, set_distribution  # noqa: F401
from minikeras.distribute.distribution import Distribution  # noqa: F401
from minikeras.distribute.layout_map import LayoutMap  # noqa: F401
from minikeras.distribute.mesh import DeviceMesh, TensorLayout, get_device_count, list_devices  # noqa: F401
from minikeras.distribute.model_parallel import ModelParallel  # noqa: F401
from minikeras.distribute.multi_host import initialize, process_count, process_index, shutdown  # noqa: F401
from minikeras.distribute.relayout import distribute_tensor  # noqa: F401

__all__ = ["DataParallel", "ModelParallel", "Distribution", "DeviceMesh", "TensorLayout", "LayoutMap",
           "distribute_tensor", "list_devices", "get_device_count", "get_distribution", "set_distribution",
           "initialize", "shutdown", "process_index", "process_count"]

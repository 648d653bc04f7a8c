"""``keras.distribution``: Keras 3's distribution API over ``mk.distribute``.

    from minikeras import keras
    mesh = keras.distribution.DeviceMesh((2, 4), ["data", "model"], keras.distribution.list_devices())
    layout_map = keras.distribution.LayoutMap(mesh)
    layout_map["d1/kernel"] = (None, "model")
    keras.distribution.set_distribution(keras.distribution.ModelParallel(layout_map=layout_map,
                                                                         batch_dim_name="data"))

The classes are ``mk.distribute``'s own (``keras.distribution.DataParallel is
mk.distribute.DataParallel``); see docs/distributed.md.
"""
import os

from minikeras.distribute import (  # noqa: F401
    DataParallel,
    DeviceMesh,
    LayoutMap,
    ModelParallel,
    TensorLayout,
    distribute_tensor,
    get_device_count,
    get_distribution as distribution,
    initialize as _initialize_processes,
    list_devices,
    set_distribution,
)

__all__ = ["DataParallel", "DeviceMesh", "LayoutMap", "ModelParallel", "TensorLayout", "distribute_tensor",
           "distribution", "get_device_count", "initialize", "list_devices", "set_distribution"]


def initialize(job_addresses=None, num_processes=None, process_id=None):
    """Connects this process to the others of a multi-host run (Keras 3's arguments).

    Args:
      job_addresses: ``"host:port"`` of process 0, or all the processes' addresses separated by
        commas (the first is the coordinator); default ``$KERAS_DISTRIBUTION_JOB_ADDRESSES``.
      num_processes: default ``$KERAS_DISTRIBUTION_NUM_PROCESSES``.
      process_id: this process's number, 0 .. num_processes - 1; default
        ``$KERAS_DISTRIBUTION_PROCESS_ID``.

    Call it first, in every process, before any tensor or model exists
    (``mk.distribute.initialize``'s rules). With nothing given on a machine that is not a TPU pod
    or a Slurm/Open MPI job, JAX's error says that the coordinator address is missing.
    """
    if job_addresses is None and "KERAS_DISTRIBUTION_JOB_ADDRESSES" in os.environ:
        job_addresses = os.environ["KERAS_DISTRIBUTION_JOB_ADDRESSES"]
    if num_processes is None and "KERAS_DISTRIBUTION_NUM_PROCESSES" in os.environ:
        num_processes = int(os.environ["KERAS_DISTRIBUTION_NUM_PROCESSES"])
    if process_id is None and "KERAS_DISTRIBUTION_PROCESS_ID" in os.environ:
        process_id = int(os.environ["KERAS_DISTRIBUTION_PROCESS_ID"])
    coordinator = job_addresses
    if job_addresses and "," in job_addresses:
        addresses = job_addresses.split(",")
        if num_processes is not None and num_processes != len(addresses):
            raise ValueError(f"The provided job_addresses {addresses} has {len(addresses)} jobs, but num_processes "
                             f"is {num_processes}")
        coordinator = addresses[0]
    _initialize_processes(coordinator, num_processes, process_id)

"""Several processes (hosts) training one model: ``jax.distributed`` plus the data plumbing.

Each process runs the same program on its own slice of the data. After
``mk.distribute.initialize(...)``, ``jax.devices()`` lists the devices of every process, so
``DataParallel()`` spans them all; each process passes its *local* batch to ``fit`` /
``mk.function`` steps, and the global batch is assembled without copying with
``jax.make_array_from_process_local_data`` (process 0's rows first, then process 1's, ...).
Variables are broadcast from process 0 the first time they are placed, so every process
starts from the same weights. Step outputs split on the batch (predictions) come back as the
rows of this process's batch; reductions (loss, metrics) are the global values everywhere.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None, **kwargs):
    """Connects this process to the others: ``jax.distributed.initialize`` (see there).

    Call it in every process, right after ``import minikeras as mk`` (which starts no JAX
    backend) and before anything starts one: creating a tensor, variable or model, or asking
    for devices. On CPU, the cross-process collectives use gloo.

    Args:
      coordinator_address: ``"host:port"`` of process 0 (e.g. ``"10.0.0.1:1234"``); None on
        TPU pods, Slurm or Open MPI, where JAX detects everything.
      num_processes: how many processes take part.
      process_id: this process's number, 0 .. num_processes - 1.
      local_device_ids: restricts this process to these local devices.
      **kwargs: passed to ``jax.distributed.initialize`` (e.g. ``initialization_timeout``).

    Raises:
      RuntimeError: if it was called before, or if JAX has started its backend already.
    """
    if jax.distributed.is_initialized():
        raise RuntimeError("mk.distribute.initialize was already called in this process (call it once)")
    _check_no_backend_yet()
    try:
        if jax.config.jax_cpu_collectives_implementation in (None, "none", ""):
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except AttributeError:  # a JAX without the option uses gloo on CPU already
        pass
    jax.distributed.initialize(coordinator_address, num_processes, process_id, local_device_ids, **kwargs)


def backend_started():
    """Whether JAX has started its backend; None where this jax cannot tell without starting it.

    jax has no public way to ask (``jax.devices()`` and ``jax.live_arrays()`` start a backend), so
    this reads its private ``xla_bridge.backends_are_initialized``, imported here rather than at
    module level: a jax that moves or drops it still imports minikeras, and the answer is then
    None (``initialize`` leaves the check to ``jax.distributed.initialize``, which raises its own
    RuntimeError when a backend has started)."""
    try:
        from jax._src.xla_bridge import backends_are_initialized
    except ImportError:
        return None
    return backends_are_initialized()


def _check_no_backend_yet():
    """``jax.distributed.initialize`` refuses to run once a JAX backend has started; say why
    in minikeras' terms."""
    if not backend_started():
        return
    arrays = jax.live_arrays()
    if arrays:
        shapes = ", ".join(str(tuple(a.shape)) for a in arrays[:3])
        started = f"{len(arrays)} array(s) exist already (shapes {shapes}{', ...' if len(arrays) > 3 else ''})"
    else:
        started = "something asked JAX for its devices already (e.g. jax.devices() or mk.config.list_devices())"
    raise RuntimeError(
        f"mk.distribute.initialize must be called before JAX starts its backend (before any tensor, variable or "
        f"model is created), but {started}. Call it right after `import minikeras as mk`, at the top of the "
        "program, in every process.")


def shutdown():
    """Disconnects from the other processes (``jax.distributed.shutdown``)."""
    jax.distributed.shutdown()


def process_index():
    """This process's number (0 on one host)."""
    return jax.process_index()


def process_count():
    """How many processes take part (1 on one host)."""
    return jax.process_count()


def broadcast_from_process_0(values):
    """``values`` (a list of arrays) as process 0 has them, in every process (host NumPy arrays)."""
    from jax.experimental import multihost_utils
    return list(multihost_utils.broadcast_one_to_all([np.asarray(v) for v in values]))


def to_process_local(array, distribution):
    """A step output readable in this process: a replicated value as it is; one split on the
    batch as the rows of this process's batch; anything else gathered whole."""
    if not isinstance(array, jax.Array) or array.is_fully_addressable or array.is_fully_replicated:
        return array
    sharding = array.sharding
    spec = tuple(sharding.spec) if isinstance(sharding, NamedSharding) else ()
    if spec and spec[0] == distribution.batch_dim_name and all(p is None for p in spec[1:]):
        rows = {}
        for shard in array.addressable_shards:
            rows.setdefault(shard.index[0].start or 0, shard.data)
        return jnp.asarray(np.concatenate([np.asarray(rows[k]) for k in sorted(rows)]))
    from jax.experimental import multihost_utils
    return jnp.asarray(multihost_utils.process_allgather(array, tiled=True))

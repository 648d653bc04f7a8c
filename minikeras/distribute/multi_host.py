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
import jax.extend.backend as jax_backend
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None, **kwargs):
    """Connects this process to the others: ``jax.distributed.initialize`` (see there).

    Call it in every process, right after ``import minikeras as mk`` and before creating any
    tensor, variable or model. On CPU, the cross-process collectives use gloo.

    Args:
      coordinator_address: ``"host:port"`` of process 0 (e.g. ``"10.0.0.1:1234"``); None on
        TPU pods, Slurm or Open MPI, where JAX detects everything.
      num_processes: how many processes take part.
      process_id: this process's number, 0 .. num_processes - 1.
      local_device_ids: restricts this process to these local devices.
      **kwargs: passed to ``jax.distributed.initialize`` (e.g. ``initialization_timeout``).
    """
    from jax._src import xla_bridge
    if jax.distributed.is_initialized():
        raise RuntimeError("mk.distribute.initialize was already called in this process (call it once)")
    try:
        if jax.config.jax_cpu_collectives_implementation in (None, "none", ""):
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except AttributeError:  # a JAX without the option uses gloo on CPU already
        pass
    restore = _release_backend() if xla_bridge.backends_are_initialized() else None
    jax.distributed.initialize(coordinator_address, num_processes, process_id, local_device_ids, **kwargs)
    if restore is not None:
        restore()


def _release_backend():
    """``import minikeras`` has already started JAX's backend (the random generator's state is a
    jax array), which ``jax.distributed.initialize`` refuses. If nothing else holds an array
    yet, the backend is cleared and that state re-created on the new one afterwards."""
    from minikeras import tensor
    from minikeras.ops import random
    generator = random.get_global_generator()
    known = {id(generator._value)} | set(tensor._SCALAR_IDS)
    others = [a for a in jax.live_arrays() if id(a) not in known]
    if others:
        shapes = ", ".join(str(tuple(a.shape)) for a in others[:3])
        raise RuntimeError(
            f"mk.distribute.initialize must be called before any tensor, variable or model is created, but "
            f"{len(others)} array(s) exist already (shapes {shapes}...). Call it right after `import minikeras as "
            "mk`, at the top of the program, in every process.")
    state = np.asarray(generator._value)
    tensor._SCALARS.clear()
    tensor._SCALAR_IDS.clear()
    generator._value = None
    jax_backend.clear_backends()

    def restore():
        generator._value = jnp.asarray(state)

    return restore


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
    if spec and spec[0] == "batch" and all(p is None for p in spec[1:]):
        rows = {}
        for shard in array.addressable_shards:
            rows.setdefault(shard.index[0].start or 0, shard.data)
        return jnp.asarray(np.concatenate([np.asarray(rows[k]) for k in sorted(rows)]))
    from jax.experimental import multihost_utils
    return jnp.asarray(multihost_utils.process_allgather(array, tiled=True))

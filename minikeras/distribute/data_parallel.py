"""DataParallel: one compiled step over a 1-D device mesh, batches split, state replicated.

The step stays ONE ``jax.jit`` program written for the whole (global) batch. Its inputs are
placed with ``NamedSharding``s - batch arrays split on dim 0 over the mesh axis ``"batch"``,
Variables (weights, optimizer slots, metric state, the random generator) replicated - and
XLA's SPMD partitioner inserts the collectives: the gradient all-reduce, and the reductions
of BatchNormalization's batch statistics and of the loss mean. So the numbers are those of
single-device training on the same batch, dropout masks included (random bits are drawn
from the replicated generator for the global shape, and JAX's partitionable threefry makes
them independent of the sharding).

A batch whose size is not a multiple of the device count is an error, not padded: padding
with a masked loss would still change BatchNormalization's statistics and the metrics, so
results would silently differ from single-device training.
"""

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from minikeras import _context
from minikeras.device import parse_device
from minikeras.distribute import multi_host
from minikeras.xla_cpu import jit

BATCH_AXIS = "batch"
def set_distribution(distribution):
    """Makes ``distribution`` (a ``DataParallel``, or None to turn it off) apply to every
    compiled step - ``fit``/``evaluate``/``predict`` and ``mk.function`` calls - outside
    ``with`` scopes. Returns nothing, like Keras 3's ``keras.distribution.set_distribution``."""
    if distribution is not None and not isinstance(distribution, DataParallel):
        raise TypeError(f"set_distribution expects a mk.distribute.DataParallel or None, received "
                        f"{type(distribution).__name__}")
    _context.execution.distribution = distribution


def get_distribution():
    """The distribution compiled steps use now: the innermost ``with`` scope of this thread
    (scopes are per thread, as TensorFlow's strategy scopes), else the one set with
    ``set_distribution`` (process-wide), else None (one device)."""
    return _context.distribution()


class DataParallel:
    """Data-parallel training over ``devices`` (all devices of all processes by default).

    Args:
      devices: a list of ``jax.Device`` or device names (``"gpu:0"``, ``"cpu:3"``); None means
        ``jax.devices()``, which after ``mk.distribute.initialize`` spans every host.

    Use it with ``model.compile(..., distribution=dp)``, ``mk.distribute.set_distribution(dp)``
    or ``with dp:`` (also ``with dp.scope():``). Under it, a compiled step's array arguments of
    rank >= 1 are split on dim 0 (their size must be a multiple of the device count), scalars
    and all Variables are replicated, and arrays already placed with a ``NamedSharding`` on
    this mesh are used as they are. Placed Variable values are stored back, so they are copied
    once, not every step.

    >>> dp = mk.distribute.DataParallel()            # every device
    >>> model.compile("adam", "mse", distribution=dp)
    >>> model.fit(x, y, batch_size=64)               # 64 / len(dp.devices) examples per device
    """

    def __init__(self, devices=None):
        self.devices = tuple(_resolve_devices(devices))
        self.mesh = Mesh(np.array(self.devices, dtype=object), (BATCH_AXIS,))
        self.batch_sharding = NamedSharding(self.mesh, PartitionSpec(BATCH_AXIS))
        self.replicated_sharding = NamedSharding(self.mesh, PartitionSpec())
        self._stacked_sharding = NamedSharding(self.mesh, PartitionSpec(None, BATCH_AXIS))
        me = jax.process_index()
        self.local_devices = tuple(d for d in self.devices if d.process_index == me)
        self.multi_process = len(self.local_devices) != len(self.devices)
        if not self.local_devices:
            raise ValueError(f"DataParallel: none of its {len(self.devices)} devices belongs to this process "
                             f"(process {me}); every process must own some of the devices")

    @property
    def num_devices(self):
        return len(self.devices)

    def __repr__(self):
        return f"DataParallel(devices={len(self.devices)}, processes={len({d.process_index for d in self.devices})})"

    # -- scopes ----------------------------------------------------------------------------
    def __enter__(self):
        # this ``with`` block is the one writer of the thread's distribution scopes
        _context.call_state.distributions.append(self)
        return self

    def __exit__(self, *exc):
        _context.call_state.distributions.pop()
        return False

    def scope(self):
        """``with dp.scope():`` is ``with dp:`` (Keras 3's spelling)."""
        return self

    # -- placement -------------------------------------------------------------------------
    def distribute_variables(self, variables):
        """Replicates the values of ``variables`` on the mesh (where they are not yet) and
        stores them back. With several processes, process 0's values are broadcast first."""
        replicated = self.replicated_sharding
        pending = [v for v in variables if not _has_sharding(v._value, replicated)]
        if not pending:
            return
        values = [v._value for v in pending]
        if self.multi_process:
            values = multi_host.broadcast_from_process_0(values)
        for variable, value in zip(pending, jax.device_put(values, [replicated] * len(values))):
            variable._value = value

    def distribute_inputs(self, values, batch_dim=0):
        """The arrays ``values`` placed for a step: rank >= ``batch_dim + 1`` split on
        ``batch_dim``, others replicated; arrays already on this mesh are kept."""
        sharding = self.batch_sharding if batch_dim == 0 else self._stacked_sharding
        out = list(values)
        todo, targets, local = [], [], []
        for i, value in enumerate(out):
            current = getattr(value, "sharding", None)
            if isinstance(current, NamedSharding) and current.mesh == self.mesh:
                continue
            if np.ndim(value) <= batch_dim:
                todo.append(i)
                targets.append(self.replicated_sharding)
                continue
            self._check_batch(np.shape(value)[batch_dim], np.shape(value))
            if self.multi_process:
                local.append(i)
            else:
                todo.append(i)
                targets.append(sharding)
        if todo:
            for i, placed in zip(todo, jax.device_put([out[i] for i in todo], targets)):
                out[i] = placed
        for i in local:
            out[i] = jax.make_array_from_process_local_data(sharding, out[i])
        return out

    def _check_batch(self, size, shape=None, about=None):
        per = len(self.local_devices)
        if size % per == 0:
            return
        about = f" ({about})" if about else f" (an input of shape {tuple(shape)})" if shape is not None else ""
        if self.multi_process:
            where = (f"this process's {per} devices: with {len(self.devices)} devices in all, each process must "
                     f"feed a batch that is a multiple of its {per} local devices")
        else:
            where = f"the {per} devices of the DataParallel mesh"
        raise ValueError(
            f"DataParallel: a batch of {size} samples{about} cannot be split evenly over {where}. Use a batch size "
            f"that is a multiple of {per} (e.g. {per * max(1, -(-size // per))}) and drop the short last batch: "
            "Dataset.batch(n, drop_remainder=True), or arrays whose length is a multiple of batch_size. (minikeras "
            "does not pad: padding would change BatchNormalization statistics and metrics.) An array argument that "
            "is not a batch can be passed already replicated: jax.device_put(x, distribution.replicated_sharding).")

    def check_batches(self, batches):
        """Fails before training when fit's array batches (``data_adapter.ArrayBatches``) would
        include a batch the devices cannot share evenly (Dataset batches are checked per step)."""
        n, batch_size, steps = (getattr(batches, name, None) for name in ("n", "batch_size", "steps"))
        if n is None or batch_size is None or steps is None:
            return
        self._check_batch(min(batch_size, n), about=f"batch_size={batch_size}")
        # a pass over the data ends with its short batch, if any (with steps_per_epoch, a later epoch may reach it)
        if n > batch_size and n % batch_size:
            self._check_batch(n % batch_size, about=f"the last batch of {n} samples in batches of {batch_size}")

    # -- the hooks of mk.function and steps_per_execution ------------------------------------
    def prepare_call(self, program, dynamic_values):
        """For ``Program.__call__``: places state and inputs; returns (callable, inputs)."""
        self.distribute_variables(program.variables)
        inputs = self.distribute_inputs(dynamic_values)
        jitted = program.derived(("distributed", self.mesh), lambda: _jit_program(program, self))
        return jitted, inputs

    def prepare_scan(self, program, stacked, make_loop):
        """For ``run_stacked``: places state and the stacked batches [steps, batch, ...];
        returns (loop, stacked) with ``loop = make_loop(program, state_sharding)``."""
        self.distribute_variables(program.variables)
        stacked = self.distribute_inputs(stacked, batch_dim=1)
        loop = make_loop(program, self.replicated_sharding)
        if self.multi_process:
            inner, loop = loop, lambda *args: _local_logs(inner(*args), self)
        return loop, stacked


def _jit_program(program, distribution):
    """The program's pure function jitted with its new state constrained to stay replicated."""
    n_state = len(program.variables)
    replicated = distribution.replicated_sharding

    def run(*flat):
        outputs, new_assigned = program.pure(flat[:n_state], flat[n_state:])
        state = [jax.lax.with_sharding_constraint(v, replicated) for v in new_assigned]
        return tuple(outputs) + tuple(state)

    jitted = jit(run)
    if not distribution.multi_process:
        return jitted

    def call(*flat):
        results = jitted(*flat)
        n_out = program.n_outputs
        return tuple(multi_host.to_process_local(r, distribution) for r in results[:n_out]) + results[n_out:]

    return call


def _local_logs(result, distribution):
    outs, state = result
    return [multi_host.to_process_local(o, distribution) for o in outs], state


def _has_sharding(value, sharding):
    current = getattr(value, "sharding", None)
    return current is sharding or (type(current) is NamedSharding and current == sharding)


def _resolve_devices(devices):
    if devices is None:
        return list(jax.devices())
    if isinstance(devices, (str, jax.Device)):
        devices = [devices]
    resolved = []
    for d in devices:
        device = parse_device(d)
        if device is None:
            raise ValueError(f"DataParallel: this machine has no device {d!r}; it has "
                             f"{', '.join(str(x) for x in jax.devices())}")
        resolved.append(device)
    if not resolved:
        raise ValueError("DataParallel needs at least one device; received an empty list")
    if len(set(resolved)) != len(resolved):
        raise ValueError(f"DataParallel: a device is listed twice in {[str(d) for d in resolved]}")
    platforms = {d.platform for d in resolved}
    if len(platforms) > 1:
        raise ValueError(f"DataParallel: all devices must be of one kind, received {sorted(platforms)}")
    return resolved

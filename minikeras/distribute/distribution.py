"""The base of ``DataParallel`` and ``ModelParallel``: one compiled step over a device mesh.

The step stays ONE ``jax.jit`` program written for the whole (global) batch. Its inputs are
placed with ``NamedSharding``s - batch arrays split on dim 0 over the mesh axis
``batch_dim_name`` (and kept whole over the other axes), each Variable (weights, optimizer
slots, metric state, the random generator) as ``variable_sharding`` says (replicated unless a
subclass's layout splits it) - and XLA's SPMD partitioner inserts the collectives: the
gradient all-reduce, the reductions of BatchNormalization's batch statistics and of the loss
mean, the gathers a split weight needs. So the numbers are those of single-device training on
the same batch (up to the order of float sums), dropout masks included (random bits are drawn
from the replicated generator for the global shape, and JAX's partitionable threefry makes
them independent of the sharding).

A batch whose size the mesh's batch axis does not divide is an error, not padded: padding with
a masked loss would still change BatchNormalization's statistics and the metrics, so results
would silently differ from single-device training.
"""
import weakref

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from minikeras import _context
from minikeras.distribute import multi_host, relayout
from minikeras.distribute.mesh import TensorLayout
from minikeras.xla_cpu import jit


class Distribution:
    """Keras 3's ``Distribution``: a device mesh, the mesh axis batches are split on, and where
    each Variable lives. Use a subclass (``DataParallel``, ``ModelParallel``).

    Use one with ``model.compile(..., distribution=d)``, ``keras.distribution.set_distribution(d)``
    or ``with d.scope():`` (also ``with d:``). Under it, a compiled step's array arguments of
    rank >= 1 are split on dim 0 (their size must be a multiple of the batch axis's size),
    scalars are replicated, Variables placed with ``variable_sharding``, and arrays already
    placed with a ``NamedSharding`` on this mesh are used as they are. Placed Variable values
    are stored back, so they are copied once, not every step.

    Args:
      device_mesh: a ``DeviceMesh``.
      batch_dim_name: the mesh axis batches are split over.
      auto_shard_dataset: kept as Keras keeps it. minikeras never shards a dataset itself: with
        several processes each one feeds its own part of every batch (docs/distributed.md).
    """

    def __init__(self, device_mesh, batch_dim_name=None, auto_shard_dataset=True):
        self._device_mesh = device_mesh
        self._batch_dim_name = batch_dim_name
        self._auto_shard_dataset = auto_shard_dataset
        self.mesh = device_mesh.backend_mesh
        self.devices = tuple(self.mesh.devices.flat)
        self.replicated_sharding = NamedSharding(self.mesh, PartitionSpec())
        self.batch_sharding = NamedSharding(self.mesh, PartitionSpec(batch_dim_name))
        self._stacked_sharding = NamedSharding(self.mesh, PartitionSpec(None, batch_dim_name))
        me = jax.process_index()
        self.local_devices = tuple(d for d in self.devices if d.process_index == me)
        self.multi_process = len(self.local_devices) != len(self.devices)
        if not self.local_devices:
            raise ValueError(f"{type(self).__name__}: none of its {len(self.devices)} devices belongs to this process "
                             f"(process {me}); every process must own some of the devices")
        self._local_batch_shards = _local_coordinates(self.mesh, batch_dim_name, me)
        self._variable_shardings = {}  # id(variable) -> (weak variable, its NamedSharding)

    # -- Keras 3's properties ----------------------------------------------------------------
    @property
    def device_mesh(self):
        return self._device_mesh

    @property
    def batch_dim_name(self):
        return self._batch_dim_name

    @property
    def auto_shard_dataset(self):
        return self._auto_shard_dataset

    @auto_shard_dataset.setter
    def auto_shard_dataset(self, value):
        self._auto_shard_dataset = value

    @property
    def num_processes(self):
        """How many processes take part (1 on one host)."""
        return jax.process_count()

    @property
    def num_model_replicas(self):
        """How many copies of the model see different parts of a batch: the batch axis's size."""
        return self.mesh.shape[self._batch_dim_name]

    @property
    def num_devices(self):
        return len(self.devices)

    def get_data_layout(self, data_shape):
        """The ``TensorLayout`` of a batch of ``data_shape``: dim 0 split over the batch axis."""
        axes = [None] * len(data_shape)
        axes[0] = self._batch_dim_name
        return TensorLayout(axes, self._device_mesh)

    def get_variable_layout(self, variable):
        """The ``TensorLayout`` of ``variable``: replicated (subclasses may split it)."""
        return TensorLayout([None] * len(variable.shape), self._device_mesh)

    def get_tensor_layout(self, path):
        """The ``TensorLayout`` of the intermediate tensor at ``path`` (a layer's
        ``"<name>/output"``), or None to leave it as XLA places it."""
        return None

    def place_layer_output(self, layer_name, outputs):
        """For ``Layer.__call__`` inside a compiled step: ``outputs`` constrained to the layout
        ``get_tensor_layout("<layer_name>/output")`` gives, or unchanged when it gives None."""
        layout = self.get_tensor_layout(f"{layer_name}/output")
        if layout is None:
            return outputs
        return relayout.place_outputs(outputs, layout.backend_layout)

    def variable_sharding(self, variable):
        """The ``NamedSharding`` ``variable`` is kept with: its layout, decided the first time it
        is asked for (as Keras decides it when the variable is created) and kept."""
        entry = self._variable_shardings.get(id(variable))
        if entry is not None and entry[0]() is variable:
            return entry[1]
        layout = self.get_variable_layout(variable)
        sharding = (self.replicated_sharding if all(axis is None for axis in layout.axes) else
                    layout.backend_layout)
        self._variable_shardings[id(variable)] = (weakref.ref(variable), sharding)
        weakref.finalize(variable, self._variable_shardings.pop, id(variable), None)
        return sharding

    def __repr__(self):
        return f"<{type(self).__name__} device_mesh={self._device_mesh}>"

    __str__ = __repr__

    # -- scopes ----------------------------------------------------------------------------
    def __enter__(self):
        # this ``with`` block is the one writer of the thread's distribution scopes
        _context.call_state.distributions.append(self)
        return self

    def __exit__(self, *exc):
        _context.call_state.distributions.pop()
        return False

    def scope(self):
        """``with d.scope():`` is ``with d:`` (Keras 3's spelling): this thread's compiled steps
        run under ``d`` inside the block."""
        return self

    # -- placement -------------------------------------------------------------------------
    def distribute_variables(self, variables):
        """Places the values of ``variables`` as ``variable_sharding`` says (where they are not
        yet) and stores them back. With several processes, process 0's values are broadcast first."""
        pending, targets = [], []
        for variable in variables:
            target = self.variable_sharding(variable)
            if not _has_sharding(variable._value, target):
                pending.append(variable)
                targets.append(target)
        if not pending:
            return
        values = [v._value for v in pending]
        if self.multi_process:
            values = multi_host.broadcast_from_process_0(values)
        for variable, value in zip(pending, jax.device_put(values, targets)):
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
        per = self._local_batch_shards
        if size % per == 0:
            return
        name = type(self).__name__
        about = f" ({about})" if about else f" (an input of shape {tuple(shape)})" if shape is not None else ""
        if self.multi_process:
            where = (f"this process's {per} parts of the batch: each process must feed a batch that is a multiple "
                     f"of {per}")
        else:
            where = (f"the {per} devices of the {name} mesh" if per == len(self.devices) else
                     f"the {per} model replicas of the {name} mesh (its batch axis {self._batch_dim_name!r})")
        raise ValueError(
            f"{name}: a batch of {size} samples{about} cannot be split evenly over {where}. Use a batch size "
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
        shardings = tuple(self.variable_sharding(v) for v in program.assigned)
        jitted = program.derived(("distributed", self.mesh, shardings),
                                 lambda: _jit_program(program, self, shardings))
        return jitted, inputs

    def prepare_scan(self, program, stacked, make_loop):
        """For ``run_stacked``: places state and the stacked batches [steps, batch, ...];
        returns (loop, stacked) with ``loop = make_loop(program, state_shardings)``."""
        self.distribute_variables(program.variables)
        stacked = self.distribute_inputs(stacked, batch_dim=1)
        loop = make_loop(program, tuple(self.variable_sharding(v) for v in program.assigned))
        if self.multi_process:
            inner, loop = loop, lambda *args: _local_logs(inner(*args), self)
        return loop, stacked


def _jit_program(program, distribution, shardings):
    """The program's pure function jitted with its new state constrained to stay where it is."""
    n_state = len(program.variables)

    def run(*flat):
        outputs, new_assigned = program.pure(flat[:n_state], flat[n_state:])
        state = [jax.lax.with_sharding_constraint(v, s) for v, s in zip(new_assigned, shardings)]
        return tuple(state) + tuple(outputs)  # the new state first, as Program.finish takes it

    jitted = jit(run, donate_argnums=program.donated_arguments())
    if not distribution.multi_process:
        return jitted

    def call(*flat):
        results = jitted(*flat)
        n_state = program.n_assigned
        return results[:n_state] + tuple(multi_host.to_process_local(r, distribution) for r in results[n_state:])

    return call


def _local_logs(result, distribution):
    state, outs = result  # the scan's results: final state, last outputs
    return state, [multi_host.to_process_local(o, distribution) for o in outs]


def _has_sharding(value, sharding):
    current = getattr(value, "sharding", None)
    return current is sharding or (type(current) is NamedSharding and current == sharding)


def _local_coordinates(mesh, axis_name, process):
    """How many positions along ``axis_name`` the devices of ``process`` hold: the number of
    parts of a batch this process feeds."""
    axis = list(mesh.axis_names).index(axis_name)
    devices = mesh.devices
    return len({index[axis] for index in np.ndindex(devices.shape) if devices[index].process_index == process})

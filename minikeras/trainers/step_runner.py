"""Calling fit's compiled steps with little Python per batch.

``fit`` calls its train step once per batch, so what happens around the compiled program
counts. The general ``mk.function`` call wraps every NumPy batch in a Tensor (a host-to-device
copy through ``jnp.asarray``), flattens the arguments and builds a signature. Here, once a
batch structure has been traced, later batches with the same shapes and dtypes go straight
to the compiled program as NumPy arrays: ``jax.jit``'s C++ dispatcher moves them to the
device itself, far cheaper than a ``jnp.asarray`` each.

The first batch of each new signature takes the general path (it traces and compiles).
"""
import jax
import numpy as np

from minikeras import _context
from minikeras.dtypes import model_input_dtype
from minikeras.programs.function import without_jax_additions
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.trainers.data_adapter import ArrayGroup
from minikeras.trainers.multi_step import run_program_gathered, run_program_stacked


def as_tensors(batch):
    """``(x, y, sample_weight)`` with None parts dropped, arrays converted to Tensors: the
    argument a step is traced with, packed as Keras 3 packs it (``x`` alone when there is no
    ``y``, ``(x,)`` if ``x`` is itself a tuple or list, ``(x, y)`` or ``(x, y, sample_weight)``),
    so a custom ``train_step(self, data)`` of ``fit(x)`` receives ``x`` itself."""
    x, y, sample_weight = batch
    convert = lambda s: None if s is None else jax.tree_util.tree_map(  # noqa: E731
        lambda a: a if isinstance(a, Tensor) else Tensor(to_array(a)), s,
        is_leaf=lambda v: isinstance(v, (Tensor, Variable)))
    if sample_weight is None:
        if y is None:
            return (convert(x),) if isinstance(x, (tuple, list)) else convert(x)
        return convert(x), convert(y)
    return convert(x), convert(y), convert(sample_weight)


def _host_leaves(batch):
    """The batch's arrays (NumPy, or jax arrays behind Tensors) in the dtypes the step was
    traced with, and a hashable signature of their structure, shapes and dtypes."""
    leaves, treedef = jax.tree_util.tree_flatten(batch)
    arrays, signature = [], [treedef]
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            leaf = leaf._value
        elif isinstance(leaf, Variable):
            leaf = leaf.value()._value
        elif not isinstance(leaf, (np.ndarray, jax.Array)):
            leaf = np.asarray(leaf)
        dtype = leaf.dtype
        canonical = model_input_dtype(dtype)
        if canonical != dtype:  # e.g. float64 NumPy data for a float32 model: cast on the host
            leaf = np.asarray(leaf, canonical) if isinstance(leaf, np.ndarray) else leaf.astype(canonical)
        arrays.append(leaf)
        signature.append(leaf.shape)
        signature.append(canonical)
    return arrays, tuple(signature)


class StepRunner:
    """Runs one compiled step (``mk.function``) on ``(x, y, sample_weight)`` batches.

    Args:
      step: the ``mk.function`` of ``train_step``, ``test_step`` or ``predict_step``.
    """

    def __init__(self, step):
        self.step = step
        self._programs = {}  # batch signature -> the step's compiled program

    def _fast_path_allowed(self):
        execution = _context.execution
        return self.step.jit_compile and not execution.run_functions_eagerly and _context.distribution() is None

    @property
    def traced(self):
        """Whether the step has been traced successfully at least once."""
        return self.step.program_count > 0

    def run(self, batches, group=False):
        """Runs ``batches`` in order (as one scanned call when ``group``); returns the last
        outputs. Errors come out as the step's code raised them, without the note jax adds
        about its internal frames (a shape error found by a loss while the step is traced is
        the user's mistake, not JAX's)."""
        try:
            if group:
                return self.run_group(batches)
            outputs = None
            for batch in batches:
                outputs = self(batch)
            return outputs
        except Exception as error:
            without_jax_additions(error)
            raise

    def __call__(self, batch):
        """The step's outputs (its logs dict, or the predictions) for one batch."""
        if not self._fast_path_allowed():
            return self.step(as_tensors(batch))
        arrays, signature = _host_leaves(batch)
        program = self._programs.get(signature)
        if program is not None:
            return program(arrays)
        tensors = as_tensors(batch)
        outputs = self.step(tensors)
        program = self._traced_program(tensors)
        if program is not None:
            self._programs[signature] = program
        return outputs

    def run_group(self, batches):
        """Runs several batches in order; equal-shaped batches of a traced signature run as one
        ``lax.scan`` (``steps_per_execution``). Returns the last batch's outputs.

        ``batches``: a list of ``(x, y, sample_weight)``, or a ``data_adapter.ArrayGroup``, whose
        batches the scan takes from the whole training arrays itself when all are full-size."""
        if len(batches) > 1 and _context.distribution() is not None and self.step.jit_compile:
            return self._run_stacked(list(batches))  # mk.distribute shards the scan
        if len(batches) > 1 and self._fast_path_allowed():
            if isinstance(batches, ArrayGroup):
                program = self._gather_program(batches)
                if program is not None:
                    return run_program_gathered(program, batches)
            stacked = [_host_leaves(batch) for batch in batches]
            signatures = {signature for _, signature in stacked}
            if len(signatures) == 1:
                program = self._programs.get(signatures.pop())
                if program is not None:
                    columns = [np.stack([np.asarray(arrays[i]) for arrays, _ in stacked])
                               for i in range(len(stacked[0][0]))]
                    return run_program_stacked(program, columns)
        outputs = None
        for batch in batches:
            outputs = self(batch)
        return outputs

    def _traced_program(self, tensors):
        """The step's compiled program for the batch ``tensors`` (``as_tensors``'s result), or
        None if that signature has not been traced."""
        return self.step.program_for((tensors,), trace_if_new=False)[0]

    def _run_stacked(self, batches):
        """Runs ``batches`` (a list of ``(x, y, sample_weight)`` with identical shapes) in order
        as one scanned call of the step's compiled program, or step by step while their
        signature has not been traced (the first call traces). Returns the last outputs."""
        program = self._traced_program(as_tensors(batches[0]))
        if program is None:
            outputs = None
            for batch in batches:
                outputs = self.step(as_tensors(batch))
            return outputs
        per_batch = [[np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(batch)] for batch in batches]
        return run_program_stacked(program, [np.stack(column) for column in zip(*per_batch)])

    def _gather_program(self, group):
        """The compiled program for ``group``'s batches if they are all full-size and that
        signature has been traced; else None (the caller takes the host path)."""
        source = group.source
        if not source.fits_device or group.full_starts() is None:
            return None
        if source.full_batch_signature is None:  # every full batch has the first one's
            source.full_batch_signature = _host_leaves(source.batch(None, 0))[1]
        return self._programs.get(source.full_batch_signature)

"""GradientTape: records ops on watched values and runs them backward.

Each tape keeps the ids of the values it tracks (watched ones and everything computed
from them) and a list of records in execution order, so walking the list backward is a
topological order. Ops that carry no gradient (round, argmax, integer results, ...) are
kept in a side list only so that ``unconnected_gradients='raise'`` can say *why* a
gradient is missing.
"""
import contextlib
import enum
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context, tape_compiled
from minikeras.ops.primitive import Record, carries_gradient
from minikeras.tensor import Tensor, Variable


class UnconnectedGradients(str, enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"
    RAISE = "raise"


def _flatten(structure):
    return jax.tree_util.tree_flatten(structure, is_leaf=lambda x: x is None or isinstance(x, (Tensor, Variable)))


class GradientTape:
    """Records operations for automatic differentiation (``tf.GradientTape``).

    Args:
      persistent: allow more than one ``gradient``/``jacobian`` call; release with ``reset``
        or by dropping the tape.
      watch_accessed_variables: watch every trainable Variable read while recording.

    >>> x = mk.constant(3.0)
    >>> with mk.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> tape.gradient(y, x)
    mk.Tensor(6.0, shape=(), dtype=float32)
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._used = False
        self._recording = False
        self.reset()

    # -- recording ----------------------------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("This GradientTape is already recording (nested `with` of the same tape)")
        self._recording = True
        _context.tapes.append(self)
        return self

    def __exit__(self, *exc):
        self._recording = False
        _remove(self)
        return False

    def _record(self, op, params, inputs, outs):
        tracked = self._tracked
        for x in inputs:
            if id(x) in tracked:
                break
        else:
            if self._shadowed and any(id(x) in self._shadowed for x in inputs):
                self._record_blocked(None, inputs, outs)  # downstream of a blocked value: propagate only
            return
        if op.differentiable:
            if len(outs) == 1 and carries_gradient(outs[0]._value.dtype):  # the common case, made short
                self._records.append(Record(op, params, inputs, outs))
                tracked.add(id(outs[0]))
                return
            kept = [o for o in outs if carries_gradient(o._value.dtype)]
            if kept:
                self._records.append(Record(op, params, inputs, outs))
                for o in kept:
                    tracked.add(id(o))
            if len(kept) == len(outs):
                return
            kept_ids = {id(o) for o in kept}
            self._record_blocked(f"{op.name} (integer result)", inputs, [o for o in outs if id(o) not in kept_ids])
        else:
            self._record_blocked(op.name, inputs, outs)

    def _record_blocked(self, name, inputs, outs):
        self._blocked.append((name, inputs, outs))
        for o in outs:
            self._shadowed.add(id(o))

    def watch(self, tensor):
        """Ensures ``tensor`` (a Tensor, Variable, or a nest of them) is traced by this tape."""
        for x in _flatten(tensor)[0]:
            if not isinstance(x, (Tensor, Variable)):
                raise ValueError(
                    f"GradientTape.watch expects mk.Tensor or mk.Variable objects, received {type(x).__name__}: "
                    f"{x!r}. Convert it first with mk.convert_to_tensor.")
            if not carries_gradient(x.dtype):
                warnings.warn(f"The dtype of the watched tensor must be floating (e.g. mk.float32), got {x.dtype.name}",
                              stacklevel=2)
            self._watch_object(x)

    def _watch_object(self, x):
        key = id(x)
        if key not in self._watched:
            self._watched[key] = x
            self._tracked.add(key)

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stops this tape from recording (``with tape.stop_recording(): ...``)."""
        if not self._recording:
            raise ValueError("GradientTape.stop_recording() needs the tape to be recording (inside its `with`)")
        _remove(self)
        self._recording = False
        try:
            yield
        finally:
            self._recording = True
            _context.tapes.append(self)

    def reset(self):
        """Forgets everything recorded and watched, releasing the memory it held; the tape is
        then like a new one (a non-persistent tape may compute gradients once more)."""
        self._used = False
        self._released_variables = ()
        self._records = []
        self._blocked = []
        self._watched = {}
        self._tracked = set()
        self._shadowed = set()

    def watched_variables(self):
        """The Variables this tape watches, in order of creation (still answered after a
        non-persistent tape released its records)."""
        if not self._watched:
            return self._released_variables
        return tuple(sorted((v for v in self._watched.values() if isinstance(v, Variable)), key=lambda v: v._uid))

    # -- differentiation ----------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        """Gradients of ``target`` (a Tensor or a nest of them, summed) with respect to ``sources``.

        Args:
          target: Tensor, Variable, or a list/nest of them (their sum is differentiated).
          sources: a Tensor/Variable or any nest of list/tuple/dict of them; the result has the
            same structure.
          output_gradients: upstream gradients, one per target (default: ones).
          unconnected_gradients: 'none' (default) returns None for sources the target does not
            depend on; 'zero' returns zeros; 'raise' raises a ValueError naming each such source
            and why (never watched, not computed while recording, integer dtype, or the path
            passes through a non-differentiable op such as round).

        Returns:
          Gradients in the structure of ``sources``.
        """
        mode = _unconnected_mode(unconnected_gradients)
        self._start_use("gradient")
        flat_sources, treedef = _flatten(sources)
        _check_sources(flat_sources)
        seeds = _seeds(target, output_gradients)
        fast = not _context.tapes
        with self._not_recording():
            grads = self._backward([(id(t), g) for t, g in seeds], tuple(id(s) for s in flat_sources), fast)
        results = []
        missing = []
        for index, source in enumerate(flat_sources):
            g = grads.get(id(source))
            if g is not None and not carries_gradient(source.dtype):
                g = None
            if g is None:
                missing.append((index, source))
                if mode is UnconnectedGradients.ZERO:
                    g = _constant(np.zeros, source.shape, source.dtype)
            results.append(g if g is None or isinstance(g, Tensor) else Tensor(g))
        if missing and mode is UnconnectedGradients.RAISE:
            self._raise_unconnected(missing, seeds)
        self._finish_use()
        return jax.tree_util.tree_unflatten(treedef, results)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """Jacobian of ``target`` with respect to each source: shape ``target.shape + source.shape``.

        Computed with one vectorised (``jax.vmap``) backward pass over all output elements;
        ``sources`` may be a nest, as for ``gradient``.
        """
        from minikeras.tape_jacobian import jacobian
        return jacobian(self, target, sources, _unconnected_mode(unconnected_gradients))

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: for ``target[b, ...]`` and ``source[b, ...]``, the result
        ``[b, *target.shape[1:], *source.shape[1:]]`` (examples assumed independent).

        One vectorised backward pass; the tape need not be persistent.
        """
        from minikeras.tape_jacobian import batch_jacobian
        return batch_jacobian(self, target, source, _unconnected_mode(unconnected_gradients))

    # -- internals ----------------------------------------------------------------------
    def _backward(self, seeds, source_ids, fast):
        """Runs the records backward from ``seeds`` [(id, cotangent)]; returns {id: gradient}.

        ``fast``: no tape records this pass, so it runs on arrays: as one compiled program when
        the tape's structure was seen before (``tape_compiled``), otherwise rule by rule
        (always so when a ``custom_gradient`` op was recorded).
        """
        if fast:
            seeds = [(key, seed._value if isinstance(seed, Tensor) else seed) for key, seed in seeds]
            traced = bool(_context.traces)
            plan = tape_compiled.make_plan(self._records, self._tracked, [key for key, _ in seeds], source_ids,
                                           traced)
            if plan is not None:
                seed_values = [seed for _, seed in seeds]
                if traced:
                    results = tape_compiled.replay(plan)(plan.values, seed_values)
                else:
                    results = tape_compiled.run(plan, seed_values)
                return {key: g for key, g in zip(source_ids, results) if g is not None}
        return self._backward_by_rule(seeds, set(source_ids), fast)

    def _backward_by_rule(self, seeds, source_ids, fast):
        from minikeras.ops.math import add
        accumulate = jnp.add if fast else add
        tracked = self._tracked
        grads = {}
        for key, seed in seeds:
            if fast and isinstance(seed, Tensor):
                seed = seed._value
            elif not fast and not isinstance(seed, Tensor):
                seed = Tensor(seed)
            grads[key] = seed if key not in grads else accumulate(grads[key], seed)
        for record in reversed(self._records):
            outs = record.outs
            cotangents = [grads.get(id(o)) for o in outs]
            if all(c is None for c in cotangents):
                continue
            for o in outs:
                if id(o) not in source_ids:
                    grads.pop(id(o), None)
            if len(outs) > 1:
                cotangents = [c if c is not None else _zeros_like(o, fast) for c, o in zip(cotangents, outs)]
            input_grads = record.op.backward(record, cotangents, fast)
            for x, g in zip(record.inputs, input_grads):
                if g is None:
                    continue
                key = id(x)
                if key not in tracked:
                    continue
                previous = grads.get(key)
                grads[key] = g if previous is None else accumulate(previous, g)
        return grads

    @contextlib.contextmanager
    def _not_recording(self):
        was_recording = self._recording
        if was_recording:
            _remove(self)
        try:
            yield
        finally:
            if was_recording:
                _context.tapes.append(self)

    def _start_use(self, what):
        if self._used and not self._persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians); "
                f"this is a second call ({what}). Create the tape with mk.GradientTape(persistent=True) to call "
                "gradient/jacobian several times.")

    def _finish_use(self):
        if not self._persistent:
            watched = self.watched_variables()
            self.reset()  # releases the records; the tape stays used
            self._released_variables = watched
        self._used = True

    def _raise_unconnected(self, missing, seeds):
        from minikeras.tape_diagnosis import explain_unconnected
        raise ValueError(explain_unconnected(self, missing, [t for t, _ in seeds]))


def _remove(tape):
    tapes = _context.tapes
    for i in range(len(tapes) - 1, -1, -1):
        if tapes[i] is tape:
            del tapes[i]
            return


def _zeros_like(tensor, fast):
    zeros = _constant(np.zeros, tensor.shape, tensor.dtype)
    return zeros if fast else Tensor(zeros)


def _constant(make, shape, dtype):
    """A constant made with NumPy and copied to the device: no kernel to compile per shape."""
    with jax.ensure_compile_time_eval():
        return jnp.asarray(make(shape, dtype))


_ONES = {}


def _ones(shape, dtype):
    """The default output gradient; cached, since an eager training loop asks for the same one
    every step."""
    key = (shape, dtype)
    ones = _ONES.get(key)
    if ones is None:
        ones = _constant(np.ones, shape, dtype)
        if len(_ONES) > 256:
            _ONES.clear()
        _ONES[key] = ones
    return ones


def _unconnected_mode(value):
    try:
        return UnconnectedGradients(getattr(value, "value", value))
    except ValueError:
        raise ValueError(f"unconnected_gradients must be 'none', 'zero' or 'raise', received {value!r}") from None


def _check_sources(flat_sources):
    for s in flat_sources:
        if not isinstance(s, (Tensor, Variable)):
            raise ValueError(
                f"Passed in object {s!r} of type '{type(s).__name__}', not mk.Tensor or mk.Variable, as a source "
                "of GradientTape.gradient")


def _single_target(target, what):
    if isinstance(target, Variable):
        return target
    if not isinstance(target, Tensor):
        raise ValueError(f"{what} expects one mk.Tensor as target, received {type(target).__name__}")
    return target


def _seeds(target, output_gradients):
    """[(target, cotangent)] for every target tensor (a list of targets is differentiated as its sum)."""
    from minikeras.tensor import to_array
    targets, _ = _flatten(target)
    if output_gradients is None:
        upstream = [None] * len(targets)
    else:
        upstream, _ = _flatten(output_gradients)
        if len(upstream) != len(targets):
            raise ValueError(f"output_gradients must match target: {len(targets)} targets, "
                             f"{len(upstream)} output_gradients")
    seeds = []
    for t, u in zip(targets, upstream):
        if t is None:
            continue
        if not isinstance(t, (Tensor, Variable)):
            raise ValueError(f"GradientTape.gradient target must be mk.Tensor or mk.Variable, received "
                             f"{type(t).__name__}")
        seed = _ones(t.shape, t.dtype) if u is None else (u if isinstance(u, Tensor) else to_array(u, t.dtype))
        if tuple(seed.shape) != t.shape:
            raise ValueError(f"output_gradients entry has shape {tuple(seed.shape)}, target has shape {t.shape}")
        seeds.append((t, seed))
    return seeds

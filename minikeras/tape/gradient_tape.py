"""GradientTape: the user's handle on a recording (``tf.GradientTape``).

The tape pushes its ``Recording`` onto ``_context.call_state.tapes`` while its ``with`` block runs, so
ops record into it; ``gradient``/``jacobian`` check their arguments, run the recording's
backward pass and apply TensorFlow's rules for unconnected sources and one-shot tapes.
"""
import contextlib
import warnings

import jax
import numpy as np

from minikeras import _context
from minikeras.ops.op import carries_gradient
from minikeras.tape import jacobian as jacobians
from minikeras.tape.diagnosis import explain_unconnected
from minikeras.tape.recording import Recording
from minikeras.tape.targets import (
    UnconnectedGradients,
    constant,
    flat_sources,
    flatten,
    seeds as make_seeds,
    single_target,
    unconnected_mode,
)
from minikeras.tensor import Tensor, Variable, in_creation_order


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
        self._recording = Recording(watch_accessed_variables)
        self._active = False  # inside the `with` block (recording, unless stop_recording is on)
        self.reset()

    # -- recording ----------------------------------------------------------------------
    def __enter__(self):
        if self._active:
            raise ValueError("This GradientTape is already recording (nested `with` of the same tape)")
        self._active = True
        _context.call_state.tapes.append(self._recording)
        return self

    def __exit__(self, *exc):
        self._active = False
        self._pause()
        return False

    def watch(self, tensor):
        """Ensures ``tensor`` (a Tensor, Variable, or a nest of them) is traced by this tape."""
        for x in flatten(tensor)[0]:
            if not isinstance(x, (Tensor, Variable)):
                raise ValueError(
                    f"GradientTape.watch expects mk.Tensor or mk.Variable objects, received {type(x).__name__}: "
                    f"{x!r}. Convert it first with mk.convert_to_tensor.")
            if not carries_gradient(x.dtype):
                warnings.warn(f"The dtype of the watched tensor must be floating (e.g. mk.float32), got {x.dtype.name}",
                              stacklevel=2)
            self._recording.watch(x)

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stops this tape from recording (``with tape.stop_recording(): ...``)."""
        if not self._active:
            raise ValueError("GradientTape.stop_recording() needs the tape to be recording (inside its `with`)")
        self._active = False
        try:
            with self._paused():
                yield
        finally:
            self._active = True

    def reset(self):
        """Forgets everything recorded and watched, releasing the memory it held; the tape is
        then like a new one (a non-persistent tape may compute gradients once more)."""
        self._used = False
        self._released_variables = ()
        self._recording.clear()

    def watched_variables(self):
        """The Variables this tape watches, in order of creation (still answered after a
        non-persistent tape released its records)."""
        if not self._recording.watched:
            return self._released_variables
        return tuple(in_creation_order(self._recording.watched_variables()))

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
        mode = unconnected_mode(unconnected_gradients)
        self._start_use("gradient")
        sources, treedef = flat_sources(sources)
        seeds = make_seeds(target, output_gradients)
        with self._paused():
            grads = self._recording.backward([(id(t), g) for t, g in seeds], tuple(id(s) for s in sources),
                                             recorded=bool(_context.call_state.tapes))
        results = []
        for source in sources:
            g = grads.get(id(source))
            if g is not None and not carries_gradient(source.dtype):
                g = None
            results.append(g if g is None or isinstance(g, Tensor) else Tensor(g))
        results = self._connect(results, sources, [t for t, _ in seeds], mode, lambda s: (s.shape, s.dtype))
        return jax.tree_util.tree_unflatten(treedef, results)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """Jacobian of ``target`` with respect to each source: shape ``target.shape + source.shape``.

        Computed with one vectorised (``jax.vmap``) backward pass over all output elements;
        ``sources`` may be a nest, as for ``gradient``.
        """
        mode = unconnected_mode(unconnected_gradients)
        self._start_use("jacobian")
        sources, treedef = flat_sources(sources)
        target = single_target(target, "jacobian")
        with self._paused():
            results = jacobians.jacobian(self._recording, target, sources)
        results = self._connect(results, sources, [target], mode,
                                lambda s: (target.shape + s.shape, target.dtype))
        return jax.tree_util.tree_unflatten(treedef, results)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: for ``target[b, ...]`` and ``source[b, ...]``, the result
        ``[b, *target.shape[1:], *source.shape[1:]]`` (examples assumed independent).

        One vectorised backward pass; the tape need not be persistent.
        """
        mode = unconnected_mode(unconnected_gradients)
        self._start_use("batch_jacobian")
        target = single_target(target, "batch_jacobian")
        if not isinstance(source, (Tensor, Variable)):
            raise ValueError(f"batch_jacobian expects one mk.Tensor or mk.Variable as source, received "
                             f"{type(source).__name__}")
        if target.ndim < 1 or source.ndim < 1 or target.shape[0] != source.shape[0]:
            raise ValueError(
                f"batch_jacobian needs target and source with the same first (batch) dimension, received "
                f"target shape {target.shape} and source shape {source.shape}")
        with self._paused():
            result = jacobians.batch_jacobian(self._recording, target, source)
        (result,) = self._connect([result], [source], [target], mode,
                                  lambda s: (target.shape + s.shape[1:], target.dtype))
        return result

    # -- internals ----------------------------------------------------------------------
    def _connect(self, results, sources, targets, mode, zeros_spec):
        """Applies ``mode`` to the sources whose result is None (zeros of ``zeros_spec(source)``
        = (shape, dtype), or a ValueError saying why), then ends this use of the tape."""
        missing = [(index, s) for index, (s, r) in enumerate(zip(sources, results)) if r is None]
        if missing and mode is UnconnectedGradients.RAISE:
            raise ValueError(explain_unconnected(self._recording, missing, targets))
        if missing and mode is UnconnectedGradients.ZERO:
            results = list(results)
            for index, source in missing:
                results[index] = Tensor(constant(np.zeros, *zeros_spec(source)))
        self._finish_use()
        return results

    def _pause(self):
        """Takes this tape's recording off ``_context.call_state.tapes``."""
        tapes = _context.call_state.tapes
        for i in range(len(tapes) - 1, -1, -1):
            if tapes[i] is self._recording:
                del tapes[i]
                return

    @contextlib.contextmanager
    def _paused(self):
        """This tape does not record the block (its own backward pass, or stop_recording)."""
        was_recording = any(t is self._recording for t in _context.call_state.tapes)
        if was_recording:
            self._pause()
        try:
            yield
        finally:
            if was_recording:
                _context.call_state.tapes.append(self._recording)

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

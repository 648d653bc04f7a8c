"""The state that the tape, the ops, ``mk.function`` and ``fit`` share, in one place.

- ``tapes``: the GradientTapes recording now, innermost last. An op checks ``if tapes:``
  and, when true, calls each entry's ``record``/``read_variable`` (the tape protocol,
  documented in ``minikeras.tape``). Code outside the tape changes the list only through
  ``recording_with`` below.
- ``traces``: the ``mk.function`` trace contexts tracing now in this thread, innermost last
  (per thread, as jax's own trace state: a dataset's prefetch thread runs eagerly while the
  main thread traces a step). ``outside_traces`` below hides them for a block that creates
  process state.
- ``call_state``: per-thread call-time state read by layers and Variables: ``dtype_policy``
  (the global dtype policy, ``mk.mixed_precision.set_global_policy``; per thread as in Keras 3)
  and ``autocast`` (inside a mixed-precision layer's call: the scope that casts the float
  Variables read there to the layer's compute dtype, or None).
- ``execution``: process-wide execution settings (``mk.config.run_functions_eagerly``,
  the active ``mk.distribute`` strategy), read where they take effect and written only by
  the public functions that own them.

Kept in one tiny module with no imports from the rest of minikeras, so every layer of the
code can read it and the check an op makes when nothing records stays a single truthiness
test (of a list for ``tapes``; ``traces`` answers it per thread).
"""
import contextlib
import threading


class TraceStack(threading.local):
    """A stack of trace contexts with a list's operations (truthiness, ``len``, indexing and
    slices, ``append``, ``pop``) whose contents belong to the calling thread."""

    def __init__(self):
        self.stack = []

    def __bool__(self):
        return bool(self.stack)

    def __len__(self):
        return len(self.stack)

    def __getitem__(self, index):
        return self.stack[index]

    def __setitem__(self, index, value):
        self.stack[index] = value

    def __iter__(self):
        return iter(self.stack)

    def append(self, context):
        self.stack.append(context)

    def pop(self):
        return self.stack.pop()


tapes = []             # GradientTapes currently recording, innermost last
traces = TraceStack()  # mk.function trace contexts tracing in this thread, innermost last


class CallState(threading.local):
    """Call-time state of the calling thread (see the module docstring).

    Attributes:
      dtype_policy: the global ``DTypePolicy`` of this thread (None until first asked for).
      autocast: None, or an object with ``maybe_cast(variable, tensor)`` that ``Variable.value()``
        applies to the Tensor it returns (a layer's autocast scope, set for the layer's call).
    """

    def __init__(self):
        self.dtype_policy = None
        self.autocast = None


call_state = CallState()


class Execution:
    """Process-wide execution settings.

    Attributes:
      run_functions_eagerly: ``mk.config.run_functions_eagerly(True)`` is in effect: every
        ``mk.function`` (and ``fit``'s step) runs its Python function eagerly.
      distribution: the active ``mk.distribute.DataParallel``, or None.
    """

    __slots__ = ("run_functions_eagerly", "distribution")

    def __init__(self):
        self.run_functions_eagerly = False
        self.distribution = None


execution = Execution()


@contextlib.contextmanager
def recording_with(replacement):
    """Runs the block with ``replacement`` (a list of objects that follow the tape protocol,
    possibly empty) as the recording tapes, and restores the tapes afterwards.

    ``recording_with([])``: nothing records (an optimizer's update is not differentiated).
    ``recording_with([collector])``: only ``collector`` sees the ops and Variable reads.
    """
    saved = tapes[:]
    tapes[:] = replacement
    try:
        yield
    finally:
        tapes[:] = saved


@contextlib.contextmanager
def outside_traces():
    """Runs the block as if no ``mk.function`` were tracing (the role of TF's ``tf.init_scope``):
    a Variable created there is process state that exists from then on, not one the function
    being traced creates. For state made on first use, such as ``mk.random``'s generator.
    """
    saved = traces[:]
    traces[:] = []
    try:
        yield
    finally:
        traces[:] = saved

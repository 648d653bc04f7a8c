"""The state that the tape, the ops, ``mk.function``, the layers and ``fit`` share, in one place.

Two objects hold it all:

- ``call_state``: the call-time state of the calling thread (a ``CallContext``, per thread as
  Keras 3's ``global_state`` and ``CallContext`` and as TensorFlow's tapes and strategy scopes):
  the recording tapes, the ``mk.function`` traces, the layer call stack and its ``training``
  flags, the distribution scopes, the global dtype policy and a mixed-precision layer's
  autocast scope, and the probes that autograph and ``TensorArray`` run. A dataset's prefetch
  thread that calls a model or records a tape sees none of the main thread's and leaves it
  untouched. A new thread starts empty.
- ``execution``: process-wide settings (``mk.config.run_functions_eagerly``, the distribution
  ``mk.distribute.set_distribution`` made global), read where they take effect and written only
  by the public functions that own them.

Each field of ``call_state`` is changed only by the context manager that owns it (listed in
``CallContext``): the value is set on entry and restored on exit, also when the block raises
(the one exception: the global dtype policy, set by Keras's ``set_global_policy``).
Hot code reads ``call_state`` once per call into a local (``state = _context.call_state``;
one thread-local lookup) and then reads plain attributes: the check an op makes when nothing
records is ``if state.tapes:``, a list's truthiness.

Adding a per-thread field (the pattern ``autocast`` and the probes follow; a policy scope such
as Keras 3's ``dtype_policy`` per layer call is one more such field):

1. give it a default in ``CallContext.__init__`` and a line in its Attributes saying what it
   holds and what changes it;
2. write the one context manager that sets it and restores the previous value (here, or in
   the module that owns the feature, writing only its own field);
3. read it through ``_context.call_state`` where it takes effect, cached in a local on hot paths;
4. add it to the ``_context`` row of docs/architecture.md.

Kept in one tiny module with no imports from the rest of minikeras, so every layer of the
code can read it.
"""
import contextlib
import threading


class CallContext(threading.local):
    """Call-time state of the calling thread (see the module docstring).

    Attributes (and the code that changes each):
      tapes: the GradientTapes' recordings recording now, innermost last (the tape protocol of
        ``minikeras.tape``). Changed by ``GradientTape``'s ``with`` block (and its
        ``stop_recording``) and ``recording_with``.
      traces: the ``mk.function`` trace contexts tracing now, innermost last. Changed by
        ``tracing`` (``programs.trace``) and ``outside_traces``.
      training: the ``training`` flags of the layer calls in progress, outermost first; its
        length is how many layer calls are in progress (the outermost one clears the losses of
        the last call). Changed by ``Layer.__call__`` (push on entry, pop in ``finally``).
      shape_only: how many abstract evaluations of a layer call (``compute_output_shape``, a
        call on KerasTensors) are in progress: they leave the losses alone. Changed by
        ``evaluating_shapes``.
      distributions: the ``mk.distribute`` distributions (``DataParallel``, ``ModelParallel``)
        entered with ``with``, innermost last (``distribution`` below reads them). Changed by
        ``Distribution``'s ``with`` block (push on entry, pop on exit).
      probes: the names of the probing evaluations in progress (``"element_shapes"``:
        ``TensorArray.element_shapes_probe``; ``"loop_body"``: autograph's probe of a loop
        body). Changed by ``probing``.
      staged_loops: autograph's staged loops being traced, innermost last (a list appended to
        inside one is refused). Changed by ``autograph.loops._tensor_loop`` (push, pop in ``finally``).
      dtype_policy: the global ``DTypePolicy`` of this thread (None until first asked for).
        Changed by ``dtype_policies.set_global_policy`` (Keras's API is a setter, not a scope).
      autocast: None, or an object with ``maybe_cast(variable, tensor)`` that
        ``Variable.value()`` applies to the Tensor it returns (a mixed-precision layer's
        autocast scope). Changed by ``Layer.__call__`` for the layer's call.
      remat_scopes: the ``keras.RematScope`` blocks entered, innermost last (a layer created
        inside one rematerializes its call as the innermost says). Changed by ``RematScope``'s
        ``with`` block (push on entry, pop on exit).
      name_scopes: the ``keras.name_scope`` blocks entered, outermost first (each with
        ``name`` and ``override_parent``); ``name_scope_path()`` joins them into the prefix of
        the paths of Variables and layer weights created now. Changed by ``name_scope``'s
        ``with`` block (push on entry, pop on exit).
      stateless_scopes: the ``keras.StatelessScope`` blocks entered, innermost last: a write of
        a Variable's value in this thread goes to the innermost (its ``add_update``), which keeps
        it as what this thread sees until the block ends, never storing it. Changed by
        ``stateless``.
      custom_object_scopes: the dicts (name -> class or function) of the
        ``mk.saving.custom_object_scope`` blocks entered, innermost last. Changed by
        ``CustomObjectScope``'s ``with`` block (push on entry, pop on exit).
      variable_values: ``{id(variable): value}``, what this thread sees instead of a Variable's
        stored value: an ``mk.function`` trace's placeholders (and values assigned during the
        trace), so that a thread that is not tracing (a dataset's prefetch drawing from
        ``mk.random``'s generator while ``fit`` traces its step) still sees the concrete
        values. Changed by ``variable_seen_as``.
    """

    def __init__(self):
        self.tapes = []
        self.traces = []
        self.training = []
        self.shape_only = 0
        self.distributions = []
        self.probes = []
        self.staged_loops = []
        self.dtype_policy = None
        self.autocast = None
        self.variable_values = {}
        self.remat_scopes = []
        self.name_scopes = []
        self.stateless_scopes = []
        self.custom_object_scopes = []


call_state = CallContext()

threads_seeing_variable_values = 0  # how many threads have a non-empty ``variable_values`` (a fast check)
_seeing_lock = threading.Lock()
_ABSENT = object()


class Execution:
    """Process-wide execution settings.

    Attributes:
      run_functions_eagerly: ``mk.config.run_functions_eagerly(True)`` is in effect: every
        ``mk.function`` (and ``fit``'s step) runs its Python function eagerly.
      distribution: the ``mk.distribute`` distribution set with ``set_distribution``, or None;
        a thread's ``with`` scope overrides it (``distribution()``).
      registered_objects: Keras's global custom objects, registered name -> class or function.
        Written by ``mk.saving.register_keras_serializable`` (and by users through
        ``get_custom_objects()``, as Keras); read by loading and ``activations.deserialize``
        through ``find_custom_object``.
    """

    __slots__ = ("run_functions_eagerly", "distribution", "registered_objects")

    def __init__(self):
        self.run_functions_eagerly = False
        self.distribution = None
        self.registered_objects = {}


execution = Execution()


def find_custom_object(name, custom_objects=None):
    """The class or function saved as ``name``: from the thread's ``custom_object_scope`` blocks
    (innermost first), then ``custom_objects``, then the registered objects; None if none has it."""
    for table in reversed(call_state.custom_object_scopes):
        if name in table:
            return table[name]
    for table in (custom_objects or {}, execution.registered_objects):
        if name in table:
            return table[name]
    return None


def name_scope_path():
    """The path of this thread's ``keras.name_scope`` blocks ("outer/inner"; "" outside
    every block): an ``override_parent`` replaces the path before its own name, as Keras's."""
    parts = []
    for scope in call_state.name_scopes:
        if scope.override_parent is not None:
            parts = [part for part in scope.override_parent.split("/") if part]
        parts.append(scope.name)
    return "/".join(parts)


def distribution(state=None):
    """The distribution compiled steps use now in this thread: the innermost ``with`` scope
    of ``state`` (default: this thread's ``call_state``), else the process-wide one."""
    scopes = (state or call_state).distributions
    return scopes[-1] if scopes else execution.distribution


@contextlib.contextmanager
def recording_with(replacement):
    """Runs the block with ``replacement`` (a list of objects that follow the tape protocol,
    possibly empty) as this thread's recording tapes, and restores the tapes afterwards.

    ``recording_with([])``: nothing records (an optimizer's update is not differentiated).
    ``recording_with([collector])``: only ``collector`` sees the ops and Variable reads.
    """
    state = call_state
    saved = state.tapes
    state.tapes = list(replacement)
    try:
        yield
    finally:
        state.tapes = saved


@contextlib.contextmanager
def tracing(context):
    """Runs the block with ``context`` (an ``mk.function`` trace context) as this thread's
    innermost trace."""
    traces = call_state.traces
    traces.append(context)
    try:
        yield context
    finally:
        traces.pop()


@contextlib.contextmanager
def outside_traces():
    """Runs the block as if no ``mk.function`` were tracing (the role of TF's ``tf.init_scope``):
    a Variable created there is process state that exists from then on, not one the function
    being traced creates. For state made on first use, such as ``mk.random``'s generator.
    """
    state = call_state
    saved = state.traces
    state.traces = []
    try:
        yield
    finally:
        state.traces = saved


@contextlib.contextmanager
def variable_seen_as(variable, value):
    """Runs the block with this thread seeing ``value`` as ``variable``'s value (reads and
    writes of ``Variable._value`` go to ``call_state.variable_values``); other threads keep
    seeing the stored value. Nested blocks for one Variable restore the outer one's value."""
    global threads_seeing_variable_values
    values = call_state.variable_values
    key = id(variable)
    previous = values.get(key, _ABSENT)
    if not values:
        with _seeing_lock:
            threads_seeing_variable_values += 1
    values[key] = value
    try:
        yield
    finally:
        if previous is _ABSENT:
            del values[key]
        else:
            values[key] = previous
        if not values:
            with _seeing_lock:
                threads_seeing_variable_values -= 1


@contextlib.contextmanager
def stateless(scope):
    """Runs the block with ``scope`` (a ``keras.StatelessScope``) receiving this thread's
    Variable writes (``Variable._value``'s setter calls ``scope.add_update((variable, value))``)."""
    global threads_seeing_variable_values
    with _seeing_lock:  # the setter looks at the scopes only while some thread sees values
        threads_seeing_variable_values += 1
    call_state.stateless_scopes.append(scope)
    try:
        yield
    finally:
        call_state.stateless_scopes.pop()
        with _seeing_lock:
            threads_seeing_variable_values -= 1


@contextlib.contextmanager
def evaluating_shapes():
    """Marks the block as an abstract evaluation of a layer call (only shapes are wanted)."""
    state = call_state
    state.shape_only += 1
    try:
        yield
    finally:
        state.shape_only -= 1


@contextlib.contextmanager
def probing(what):
    """Marks the block as a probing evaluation named ``what`` (see ``CallContext.probes``)."""
    probes = call_state.probes
    probes.append(what)
    try:
        yield
    finally:
        probes.pop()


def is_probing(what):
    """Whether a probing evaluation named ``what`` is in progress in this thread."""
    return what in call_state.probes

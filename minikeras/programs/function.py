"""mk.function: compiles a Python function of Tensors and Variables into one XLA program.

On each new input signature the function is traced once (``programs.trace``): its Python
body runs one time, the Variables it reads, assigns or creates become the state of the
program, and the program is compiled with ``xla_cpu.jit``. Each call passes the state in
and writes the Variables it assigned back (``programs.Program``). As in ``tf.function``,
Python side effects (``print``, appending to a list) happen once per trace, never per call.

A signature with None sizes (an ``input_signature`` with None dimensions, or the one
``reduce_retracing`` generalises to) is traced once with symbolic sizes and compiled for
each concrete shape (``programs.signatures``). A function that cannot be traced that way
(an op that needs a concrete size) is traced for each concrete shape instead, with a warning.
The programs of both kinds are found and kept by signature in one ``programs.ProgramCache``.
"""
import collections
import functools
import types
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context, autograph
from minikeras.backend import static_shape
from minikeras.dtypes import canonical_dtype
from minikeras.programs.input_signature import bind, check_signature
from minikeras.programs.program import NewSignature, Program
from minikeras.programs.program_cache import ProgramCache
from minikeras.programs.signatures import is_general, specs_of, symbolic_avals
from minikeras.programs.trace import describe_failure, trace
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.tensor_spec import TensorSpec

# tf.function warns when a function is traced this many times within its last calls.
FREQUENT_TRACING_THRESHOLD = 5
FREQUENT_TRACING_HISTORY = 10


def _is_array_leaf(x):
    return isinstance(x, (Tensor, np.ndarray, jax.Array, np.generic))


def _is_dynamic_leaf(x):
    """An array argument, or a TensorSpec standing for one (``get_concrete_function``)."""
    return _is_array_leaf(x) or isinstance(x, TensorSpec)


def _signature(leaves):
    key = []
    for leaf in leaves:
        if _is_dynamic_leaf(leaf):
            key.append(("T", tuple(leaf.shape), canonical_dtype(leaf.dtype).name))
        elif isinstance(leaf, Variable):
            key.append(("V", id(leaf)))
        else:
            try:
                hash(leaf)
                key.append(("S", type(leaf), leaf))
            except TypeError:
                key.append(("O", id(leaf)))
    return tuple(key)


def _flatten(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))


def without_jax_additions(error):
    """``error`` without the note (or chained ``UnfilteredStackTrace``) that jax adds about its
    own frames: the user's mistake is in their function, and the traceback shows it."""
    notes = getattr(error, "__notes__", None)
    if notes:
        kept = [note for note in notes if "JAX has removed its internal frames" not in note]
        if kept:
            error.__notes__ = kept
        else:
            del error.__notes__
    cause = error.__cause__
    if cause is not None and type(cause).__name__ == "UnfilteredStackTrace":
        error.__cause__ = cause.__cause__
        error.__suppress_context__ = True
    return error


def _creation_error(name, variables):
    names = ", ".join(repr(v.name) for v in variables)
    return ValueError(
        f"mk.function({name}) created mk.Variable(s) {names} on a trace after the first: mk.function only supports "
        "singleton mk.Variables created on the first call. Make sure the mk.Variable is only created once (e.g. "
        "`if self.w is None: self.w = mk.Variable(...)`, as layers build their weights) or created outside "
        "mk.function.")


class Function:
    """A compiled callable made by ``mk.function`` (see there)."""

    def __init__(self, python_function, jit_compile=True, input_signature=None, reduce_retracing=False,
                 autograph=True):
        self.python_function = python_function
        self.jit_compile = jit_compile
        self.input_signature = (None if input_signature is None
                                else check_signature(getattr(python_function, "__name__", "function"), input_signature))
        self.reduce_retracing = bool(reduce_retracing)
        self.autograph = autograph
        spec_shapes = None if self.input_signature is None else [
            spec.shape for spec in jax.tree_util.tree_leaves(self.input_signature,
                                                             is_leaf=lambda x: isinstance(x, TensorSpec))]
        self._converted = None     # the function autograph converted, made on the first trace
        self._cache = ProgramCache(spec_shapes, self.reduce_retracing)
        self._last_program = None  # the program of the last call f(tensor, ...), and its arity
        self._last_arity = -1
        self._last_nest = None     # (treedef, program) of the last call f(nest of arrays)
        self._tracing_count = 0
        self._recent_calls = collections.deque(maxlen=FREQUENT_TRACING_HISTORY)  # whether each recent call traced
        self._bound = {}           # id(instance) -> Function, for methods
        functools.update_wrapper(self, python_function)

    def __get__(self, instance, owner=None):
        """A method gets one Function per instance (its own traces and Variables), as in TF."""
        if instance is None:
            return self
        key = id(instance)
        bound = self._bound.get(key)
        if bound is None:
            try:
                ref = weakref.ref(instance)
            except TypeError:
                return types.MethodType(self, instance)
            converted = self._converted_function

            def method(*args, **kwargs):
                return converted()(ref(), *args, **kwargs)

            functools.update_wrapper(method, self.python_function)
            bound = Function(method, jit_compile=self.jit_compile, input_signature=self.input_signature,
                             reduce_retracing=self.reduce_retracing, autograph=False)  # converted above
            self._bound[key] = bound
            weakref.finalize(instance, self._bound.pop, key, None)
        return bound

    def __call__(self, *args, **kwargs):
        if self.input_signature is not None:
            args, kwargs = bind(self.__name__, self.python_function, self.input_signature, args, kwargs), {}
        state = _context.call_state
        if not self.jit_compile or _context.execution.run_functions_eagerly or state.traces or state.tapes:
            # Eager: debugging, nested inside another mk.function (inlined), or under a
            # recording tape (which must see every op to differentiate through the call).
            return self._converted_function()(*args, **kwargs)
        program = self._last_program
        one_device = not state.distributions and _context.execution.distribution is None
        if len(args) == self._last_arity and not kwargs and one_device:
            # The common call, f(tensor, ...) again: no pytree walk and no signature built here;
            # jax.jit's dispatcher compares the avals, and a mismatch aborts the call.
            arrays = []
            for a in args:
                if type(a) is not Tensor:
                    break
                arrays.append(a._value)
            else:
                try:
                    return program.call_strict(arrays)
                except NewSignature:
                    pass
        elif not kwargs and self._last_nest is not None and one_device:
            # f(nest of arrays) again, e.g. an optimizer's update of a list of gradients: one
            # pytree walk, no signature; jax.jit's dispatcher compares the avals.
            leaves, treedef = _flatten(args)
            last_treedef, last_program = self._last_nest
            if treedef == last_treedef:
                arrays = [x._value if type(x) is Tensor else x for x in leaves]
                if all(isinstance(x, jax.Array) for x in arrays):
                    try:
                        return last_program.call_strict(arrays)
                    except NewSignature:
                        pass
        try:
            program, inputs = self.program_for(args, kwargs)
            out = program(inputs)
            if not kwargs:
                if all(type(a) is Tensor for a in args):
                    self._last_program, self._last_arity = program, len(args)
                else:
                    leaves, treedef = _flatten(args)
                    if all(isinstance(x, (Tensor, jax.Array)) for x in leaves):
                        self._last_nest = (treedef, program)
            return out
        except Exception as error:  # a mistake in the user's function, found while tracing
            without_jax_additions(error)
            raise

    def program_for(self, args, kwargs=None, trace_if_new=True):
        """The ``Program`` for calling the function on ``args``/``kwargs``, and its inputs
        (the arrays among the arguments). A new signature is traced now, unless
        ``trace_if_new`` is False: then the program is None."""
        leaves, treedef = _flatten((tuple(args), dict(kwargs or {})))
        dynamic_positions = [i for i, x in enumerate(leaves) if _is_array_leaf(x)]
        inputs = [to_array(leaves[i]) for i in dynamic_positions]
        distribution = _context.distribution()
        if distribution is not None:  # the program is written for the global batch over its mesh
            inputs = distribution.distribute_inputs(inputs)
        program = self._program(treedef, leaves, dynamic_positions, lambda: [_aval(v) for v in inputs], trace_if_new)
        return program, inputs

    def _program(self, treedef, leaves, dynamic_positions, avals, trace_if_new=True):
        """The program for this signature: the one the cache has for it, or one traced now
        (``avals()``: the inputs' avals) if ``trace_if_new``."""
        signature = _signature(leaves)
        program = self._cache.lookup(treedef, signature)
        new = program is None and trace_if_new
        if new:
            program = self._trace_new(treedef, signature, leaves, dynamic_positions, avals)
        self._note_call(new)
        return program

    def _trace_new(self, treedef, signature, leaves, dynamic_positions, avals):
        """Traces a call that no program runs: once for all sizes where the input signature or
        ``reduce_retracing`` asks for it (the cache's ``target``) and the body allows it, else
        for its shapes."""
        target = self._cache.target(treedef, signature)
        failure = None
        if target is not None:
            program, failure = self._trace_general(treedef, target, leaves, dynamic_positions, signature)
            if program is not None:
                return program
        if is_general(signature):  # get_concrete_function(TensorSpec([None, ...])): no shapes to trace instead
            raise ValueError(f"mk.function({self.__name__}) could not be traced for {specs_of(signature)} with "
                             f"None sizes ({describe_failure(failure)}); get_concrete_function needs concrete "
                             "shapes for it: pass Tensors or TensorSpecs with every dimension given.") from failure
        program = self._trace(treedef, leaves, dynamic_positions, avals())
        self._cache.store(treedef, signature, program)
        if failure is not None:
            warnings.warn(
                f"mk.function({self.__name__}) could not be traced once for {specs_of(target)}: "
                f"{describe_failure(failure)}. It is traced (its Python body runs) for each concrete shape instead, "
                "as without None sizes. Ops that need a concrete size: Python arithmetic or comparisons on "
                "x.shape[i] of a None dimension, and shapes built from mk.shape(x).", stacklevel=5)
        return program

    def _trace_general(self, treedef, general, leaves, dynamic_positions, signature):
        """(the program traced once for ``general``'s named sizes, None), or (None, the error);
        the program runs the call of ``signature`` that caused it."""
        count = self._tracing_count
        try:
            program = self._trace(treedef, leaves, dynamic_positions, symbolic_avals(general, jnp.dtype))
        except Exception as error:  # noqa: BLE001 - any failure: trace for concrete shapes instead
            self._tracing_count = count
            self._cache.failed(treedef, general, error)
            return None, error
        self._cache.store(treedef, general, program, serves=signature)
        return program, None

    def get_concrete_function(self, *args, **kwargs):
        """The traced program for one signature, as ``tf.function``'s ``get_concrete_function``:
        give Tensors or ``mk.TensorSpec``s, or nothing when the function has an
        ``input_signature``. A TensorSpec's None dimensions are traced once with symbolic sizes,
        as for a call (a body that needs concrete sizes is a ValueError here). It is traced now
        if that signature is new. Returns a ``ConcreteFunction``."""
        name = self.__name__
        if not args and not kwargs and self.input_signature is not None:
            args = self.input_signature
        elif self.input_signature is not None:
            args, kwargs = bind(name, self.python_function, self.input_signature, args, kwargs), {}
        leaves, treedef = _flatten((tuple(args), dict(kwargs)))
        for leaf in leaves:
            if isinstance(leaf, TensorSpec) and leaf.shape is None:
                raise ValueError(f"mk.function({name}).get_concrete_function needs a known rank (an XLA program has "
                                 f"one); received {leaf}. Give its shape, with None for unknown sizes.")
        dynamic_positions = [i for i, x in enumerate(leaves) if _is_dynamic_leaf(x)]
        program = self._program(treedef, leaves, dynamic_positions, lambda: [
            jax.ShapeDtypeStruct(tuple(leaves[i].shape), canonical_dtype(leaves[i].dtype)) for i in dynamic_positions])
        specs = [TensorSpec(static_shape(a.shape), a.dtype) for a in program.jaxpr.in_avals[len(program.variables):]]
        spec_leaves = list(leaves)
        for position, spec in zip(dynamic_positions, specs):
            spec_leaves[position] = spec
        return ConcreteFunction(name, program, jax.tree_util.tree_unflatten(treedef, spec_leaves), specs)

    def _note_call(self, traced):
        calls = self._recent_calls
        calls.append(traced)
        if traced and sum(calls) >= FREQUENT_TRACING_THRESHOLD:
            warnings.warn(
                f"{sum(calls)} out of the last {len(calls)} calls to {self.python_function!r} triggered mk.function "
                "retracing. Tracing is expensive and the excessive number of tracings could be due to (1) creating "
                "@mk.function repeatedly in a loop, (2) passing tensors with different shapes, (3) passing Python "
                "objects instead of tensors (each new Python value is a new signature).", stacklevel=4)
            calls.clear()

    def _trace(self, treedef, leaves, dynamic_positions, avals):
        first_trace = not self._cache  # a first trace that failed does not count
        self._tracing_count += 1
        positions = set(dynamic_positions)
        static_leaves = [None if i in positions else x for i, x in enumerate(leaves)]
        function = self._converted_function()
        traced = trace(function, treedef, static_leaves, dynamic_positions, avals)
        if traced.created:
            if not first_trace:
                raise _creation_error(self.__name__, traced.created)
            # As tf.function does, a first trace that created Variables is traced once more, with
            # creation no longer allowed: a function that would create them on every call fails
            # here, and the program is the one that reads the Variables created above. Both count,
            # as in TensorFlow's experimental_get_tracing_count().
            self._tracing_count += 1
            traced = trace(function, treedef, static_leaves, dynamic_positions, avals)
            if traced.created:
                raise _creation_error(self.__name__, traced.created)
        return Program(traced)

    def _converted_function(self):
        """The Python function as it runs: converted by autograph once, unless autograph=False."""
        if self._converted is None:
            self._converted = autograph.convert(self.python_function) if self.autograph else self.python_function
        return self._converted

    @property
    def program_count(self):
        """How many signatures have been traced and compiled successfully."""
        return len(self._cache)

    def programs(self):
        """The ``Program`` of each signature traced so far."""
        return self._cache.programs()

    @property
    def tracing_count(self):
        """How many times the Python body has been traced: once per new input signature, and twice
        for the first one when that trace created Variables (as TensorFlow counts)."""
        return self._tracing_count

    def experimental_get_tracing_count(self):
        """``tf.function``'s name for ``tracing_count``."""
        return self._tracing_count


def _aval(array):
    return jax.ShapeDtypeStruct(array.shape, array.dtype)


class ConcreteFunction:
    """One traced signature of an ``mk.function`` (``tf.function``'s ConcreteFunction): call it
    with Tensors of exactly that signature's shapes and dtypes.

    Attributes:
      structured_input_signature: ``(args, kwargs)`` with a TensorSpec for each Tensor argument.
      structured_outputs: the function's result with a TensorSpec for each Tensor in it.
      variables, trainable_variables: the Variables the program reads or writes.
      jaxpr: the traced program (what TensorFlow calls the graph).
    """

    def __init__(self, name, program, structured_input_signature, input_specs):
        self._name = name
        self._program = program
        self._input_specs = input_specs
        self.structured_input_signature = structured_input_signature
        self.structured_outputs = program.structure(
            [TensorSpec(static_shape(a.shape), a.dtype) for a in program.jaxpr.out_avals[:program.n_outputs]],
            wrap=False)
        self.variables = list(program.variables)
        self.trainable_variables = [v for v in program.variables if v.trainable]
        self.jaxpr = program.jaxpr

    def __call__(self, *args, **kwargs):
        leaves = [leaf for leaf in _flatten((tuple(args), dict(kwargs)))[0] if _is_array_leaf(leaf)]
        inputs = [to_array(leaf) for leaf in leaves]
        if len(inputs) != len(self._input_specs) or not all(
                spec.is_compatible_with(_aval(x)) for spec, x in zip(self._input_specs, inputs)):
            received = [TensorSpec(x.shape, x.dtype) for x in inputs]
            raise TypeError(f"ConcreteFunction {self._name} takes Tensors {self._input_specs}, received {received}")
        if self._program.general and not self._program.accepts(inputs):
            received = [TensorSpec(x.shape, x.dtype) for x in inputs]
            raise ValueError(f"ConcreteFunction {self._name} was traced with symbolic sizes for its None dimensions, "
                             f"which are at least 1; received {received}. Call the mk.function itself: it traces "
                             "a size 0 on its own.")
        return self._program(inputs)

    def __repr__(self):
        return f"<ConcreteFunction {self._name}{self.structured_input_signature}>"


def function(func=None, input_signature=None, autograph=True, jit_compile=True, reduce_retracing=False):
    """Compiles ``func`` into one XLA program, like ``tf.function``.

    The function is traced once per new input signature (new shapes or dtypes of its Tensor
    arguments, or new Python values among its other arguments): its Python body runs then,
    and never on later calls with the same signature, so Python side effects (``print``)
    happen once per trace. Variables read inside become inputs of the program and Variables
    assigned inside are written back after each call. Variables may be created on the first
    trace only (lazily built layers, optimizer slots); as in TensorFlow, a first trace that
    creates Variables is followed by a second one that must not, so such a function's body
    runs twice on its first call. With ``autograph=True`` (the default) Python ``if``,
    ``while`` and ``for`` statements on traced Tensors become ``mk.cond`` / ``mk.while_loop``
    (``minikeras.autograph``; ``mk.autograph.to_code(f)`` shows the converted source); with
    ``autograph=False`` such a statement is an error. Under a recording GradientTape, or with
    ``jit_compile=False``, the function runs eagerly.

    Args:
      func: the function (or use ``@mk.function(...)`` as a decorator).
      input_signature: a list of ``mk.TensorSpec`` (or nests of them), one per argument: the
        function then takes exactly such Tensors (Python numbers and arrays are converted; a
        mismatch is a TypeError). A ``None`` dimension accepts any size and, as in
        TensorFlow, the body is traced once for all sizes: inside, ``x.shape`` shows None
        there and ``mk.shape(x)`` gives the size as a Tensor (shapes built from it, e.g.
        ``mk.zeros([mk.shape(x)[0], 2])``, work). XLA still compiles one program per
        concrete shape, from that one trace. Differences from TensorFlow: a size 0 is traced
        on its own (a symbolic size is at least 1); None sizes that are equal in the call
        being traced share one symbol, so a later call where they differ is traced again;
        and a body that needs a concrete size (``mk.split`` of a None axis, Python
        arithmetic on ``x.shape[0]``) cannot be traced once: it is traced for each concrete
        shape instead, with a warning naming the function and the op. Under
        ``mk.distribute`` each concrete shape is traced.
      autograph: convert Python control flow on Tensors (default True).
      jit_compile: False runs the function eagerly (TensorFlow's default graph mode has no
        counterpart here: minikeras always compiles with XLA).
      reduce_retracing: as in TensorFlow, a call that no trace runs is traced with the most
        specific signature that also covers the signatures traced before: None where their
        sizes differ (after f(shape (2, 3)), f(shape (4, 3)) traces (None, 3) once for all
        batch sizes). Python values are not generalised. Unlike TensorFlow, which relaxes a
        change of rank to an unknown rank, a new rank is traced with its own shapes (an XLA
        program has a fixed rank), and the None sizes behave as with ``input_signature``.

    >>> v = mk.Variable(1.0)
    >>> @mk.function
    ... def step(x):
    ...     v.assign_add(x)
    ...     return v * 2.0
    >>> step(mk.constant(2.0))
    mk.Tensor(6.0, shape=(), dtype=float32)
    """
    def make(f):
        return Function(f, jit_compile=jit_compile, input_signature=input_signature, reduce_retracing=reduce_retracing,
                        autograph=autograph)

    return make if func is None else make(func)

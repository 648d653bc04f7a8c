"""mk.function: compiles a Python function of Tensors and Variables into one XLA program.

Variables the function reads become inputs of the compiled program, Variables it assigns
become outputs, and their new values are written back after each call. On a new input
signature the function is traced abstractly (``jax.eval_shape``) to discover the Variables
it touches or creates, then compiled with ``jax.jit`` over exactly those.

While tracing, values that do not depend on the inputs (``mk.ones(...)``, initializers,
constants) are computed eagerly (``jax.ensure_compile_time_eval``), as TensorFlow does for
constants: that is what lets a layer create its weights on the first call.
"""
import functools
import operator
import types
import weakref

import jax
import numpy as np

from minikeras import _context
from minikeras.dtypes import canonical_dtype
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.xla_cpu import jit

_MAX_DISCOVERY_PASSES = 8


class _TraceContext:
    """Watches Variable reads, writes and creations while a function is traced."""

    def __init__(self, known, anchor=None):
        self.known = known
        self.known_ids = {id(v) for v in known}
        self.new = []          # Variables touched but not lifted in this pass
        self.new_ids = set()
        self.created = []
        self.assigned_ids = set()
        self.restore = {}      # id -> (variable, value before the trace touched it)
        self.anchor = anchor   # discovery only: a traced scalar to make placeholders from

    def on_read(self, variable):
        key = id(variable)
        if key not in self.known_ids and key not in self.new_ids:
            self.new.append(variable)
            self.new_ids.add(key)
            if self.anchor is not None:
                # While discovering, a Variable not lifted yet reads as a traced placeholder, so
                # that work on it is traced (cheap) rather than run eagerly as a constant.
                self.restore.setdefault(key, (variable, variable._value))
                variable._value = _placeholder(variable._value, self.anchor)

    def on_create(self, variable):
        self.restore[id(variable)] = (variable, variable._value)
        self.created.append(variable)
        self.on_read(variable)

    def on_assign(self, variable):
        self.on_read(variable)
        self.assigned_ids.add(id(variable))
        self.restore.setdefault(id(variable), (variable, variable._value))

    def variables(self):
        """Every Variable this trace has lifted or touched so far."""
        return list(self.known) + self.new

    def undo(self):
        for variable, value in self.restore.values():
            variable._value = value


def _placeholder(value, anchor):
    try:
        return jax.numpy.broadcast_to(anchor.astype(value.dtype), value.shape)
    except (TypeError, ValueError):
        return value


def _is_array_leaf(x):
    return isinstance(x, (Tensor, np.ndarray, jax.Array, np.generic))


def _signature(leaves):
    key = []
    for leaf in leaves:
        if _is_array_leaf(leaf):
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


def _without_jax_additions(error):
    """``error`` without the note (or chained ``UnfilteredStackTrace``) that jax.jit adds about
    its own frames: the user's mistake is in their function, and the traceback shows it."""
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
        f"mk.function({name}) created new mk.Variable(s) {names} on a trace after the first. mk.function only "
        "supports Variables created on the first call: create them once (e.g. `if self.w is None: self.w = "
        "mk.Variable(...)`, as layers build their weights) or outside the function.")


_value_of = operator.attrgetter("_value")  # a Variable's array, without a Python frame per call


class _NewSignature(Exception):
    """The fast call's arguments need another program (see Function.__call__)."""


class _Program:
    """One compiled signature: the lifted Variables and the jitted pure function."""

    def __init__(self, function, name, treedef, leaves, dynamic_positions, variables, assigned_ids):
        self.assigned = [v for v in variables if id(v) in assigned_ids]
        self.variables = self.assigned + [v for v in variables if id(v) not in assigned_ids]
        self.n_assigned = len(self.assigned)
        self.name = name
        self.treedef = treedef
        self.static_leaves = leaves
        self.dynamic_positions = dynamic_positions
        self.function = function
        self.out_spec = None
        self.traced = False
        self.strict = False  # set during Function's fast call: a retrace there means new avals
        n_state = len(self.variables)
        # flat positional arrays in and out: the cheapest call jax.jit's dispatcher has
        self.jitted = jit(lambda *flat: self._pure(flat[:n_state], flat[n_state:]))

    def _pure(self, state, dynamic_values):
        if self.strict and self.traced:
            raise _NewSignature  # Function.__call__ takes the general path, which traces properly
        self.traced = True
        values = dict(zip(map(id, self.variables), state))
        out, ctx = _run_traced(self.function, self.variables, values, self.treedef, self.static_leaves,
                               self.dynamic_positions, dynamic_values)
        if ctx.created:
            raise _creation_error(self.name, ctx.created)
        if ctx.new or not ctx.assigned_ids <= {id(v) for v in self.assigned}:
            raise ValueError(
                f"mk.function({self.name}): the function touched different Variables when traced again "
                f"({[v.name for v in ctx.new]}); the Variables a function uses must not depend on Python state "
                "that changes between traces.")
        out_leaves, out_tree = _flatten(out)
        is_array = [_is_array_leaf(x) or isinstance(x, Variable) for x in out_leaves]
        static = [None if a else x for a, x in zip(is_array, out_leaves)]
        single = len(out_leaves) == 1 and is_array[0] and out_tree == jax.tree_util.tree_structure(0)
        self.out_spec = (out_tree, static, is_array, single, sum(is_array))
        arrays = [to_array(x) for x, a in zip(out_leaves, is_array) if a]
        return tuple(arrays) + tuple(values[id(v)] for v in self.assigned)

    def call_strict(self, dynamic_values):
        """Calls the program if ``dynamic_values`` have the avals it was traced for; raises
        _NewSignature (before anything runs) otherwise. jax.jit's dispatcher does the check.
        (No mk.distribute here: Function.__call__ takes this path only without one.)"""
        self.strict = True
        try:
            results = self.jitted(*map(_value_of, self.variables), *dynamic_values)
        finally:
            self.strict = False
        return self._finish(results)

    def __call__(self, dynamic_values):
        jitted = self.jitted
        distribution = _context.execution.distribution
        if distribution is not None:  # mk.distribute: state replicated and batches split over its mesh
            jitted, dynamic_values = distribution.prepare_call(self, dynamic_values)
        return self._finish(jitted(*map(_value_of, self.variables), *dynamic_values))

    def _finish(self, results):
        """Writes the new Variable values back and returns the outputs as the function did."""
        out_tree, static, is_array, single, n_out = self.out_spec
        if self.n_assigned:
            for variable, value in zip(self.assigned, results[n_out:]):
                variable._value = value
        if single:
            return Tensor(results[0])
        arrays = iter(results[:n_out])
        leaves = [Tensor(next(arrays)) if a else s for a, s in zip(is_array, static)]
        return jax.tree_util.tree_unflatten(out_tree, leaves)


def _run_traced(function, variables, values, treedef, leaves, dynamic_positions, dynamic_values, anchor=None):
    """Runs ``function`` with lifted Variables bound to ``values``; restores them afterwards.

    ``values`` maps id(variable) -> traced value; a write inside the function lands in it.
    """
    originals = [(v, v._value) for v in variables]
    ctx = _TraceContext(variables, anchor)
    for v in variables:
        v._value = values[id(v)]
    _context.traces.append(ctx)
    try:
        leaves = list(leaves)
        for position, value in zip(dynamic_positions, dynamic_values):
            leaves[position] = Tensor(value)
        args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
        with jax.ensure_compile_time_eval():  # constants stay concrete (weights built on the first call)
            out = function(*args, **kwargs)
        out = jax.tree_util.tree_map(lambda x: Tensor(x._value) if isinstance(x, Variable) else x, out,
                                     is_leaf=lambda x: isinstance(x, (Tensor, Variable)))
        for v in variables:
            values[id(v)] = v._value
    finally:
        _context.traces.pop()
        ctx.undo()
        for v, value in originals:
            v._value = value
    return out, ctx


class Function:
    """A compiled callable made by ``mk.function`` (see there)."""

    def __init__(self, python_function, jit_compile=True):
        self.python_function = python_function
        self.jit_compile = jit_compile
        self._programs = {}
        self._last_program = None  # the program of the last call f(tensor, ...), and its arity
        self._last_arity = -1
        self._known_variables = []
        self._tracing_count = 0
        self._bound = {}          # id(instance) -> Function, for methods
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
            function = self.python_function

            def method(*args, **kwargs):
                return function(ref(), *args, **kwargs)

            functools.update_wrapper(method, function)
            bound = Function(method, jit_compile=self.jit_compile)
            self._bound[key] = bound
            weakref.finalize(instance, self._bound.pop, key, None)
        return bound

    def __call__(self, *args, **kwargs):
        execution = _context.execution
        if not self.jit_compile or execution.run_functions_eagerly or _context.traces or _context.tapes:
            # Eager: debugging, nested inside another mk.function (inlined), or under a
            # recording tape (which must see every op to differentiate through the call).
            return self.python_function(*args, **kwargs)
        program = self._last_program
        if len(args) == self._last_arity and not kwargs and execution.distribution is None:
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
                except _NewSignature:
                    pass
        try:
            leaves, treedef = _flatten((args, kwargs))
            key = (treedef, _signature(leaves))
            program = self._programs.get(key)
            dynamic_positions = [i for i, x in enumerate(leaves) if _is_array_leaf(x)]
            dynamic_values = [to_array(leaves[i]) for i in dynamic_positions]
            if program is None:
                program = self._trace(treedef, leaves, dynamic_positions, dynamic_values)
                self._programs[key] = program
            out = program(dynamic_values)
            if not kwargs and all(type(a) is Tensor for a in args):
                self._last_program, self._last_arity = program, len(args)
            return out
        except Exception as error:  # a mistake in the user's function, found while tracing
            _without_jax_additions(error)
            raise

    def _trace(self, treedef, leaves, dynamic_positions, dynamic_values):
        first_trace = not self._programs  # a first trace that failed does not count
        self._tracing_count += 1
        static_leaves = [None if i in set(dynamic_positions) else x for i, x in enumerate(leaves)]
        variables = list(self._known_variables)
        shapes = [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in dynamic_values]
        for attempt in range(_MAX_DISCOVERY_PASSES):
            ctx = self._discover(variables, treedef, static_leaves, dynamic_positions, shapes)
            if ctx.created and (attempt > 0 or not first_trace):
                raise _creation_error(self.__name__, ctx.created)
            if not ctx.new:
                break
            variables.extend(ctx.new)
        else:
            raise RuntimeError(f"mk.function({self.__name__}): the Variables it uses kept changing while tracing")
        self._known_variables = variables
        return _Program(self.python_function, self.__name__, treedef, static_leaves, dynamic_positions, variables,
                        ctx.assigned_ids)

    def _discover(self, variables, treedef, static_leaves, dynamic_positions, shapes):
        holder = {}

        def probe(variable_values, dynamic_values, anchor):
            values = dict(zip(map(id, variables), variable_values))
            _, holder["ctx"] = _run_traced(self.python_function, variables, values, treedef, static_leaves,
                                           dynamic_positions, dynamic_values, anchor)
            return None

        jax.eval_shape(probe, [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in variables], shapes,
                       jax.ShapeDtypeStruct((), np.float32))
        return holder["ctx"]

    @property
    def tracing_count(self):
        """How many times the function has been traced (once per new input signature)."""
        return self._tracing_count

    def experimental_get_tracing_count(self):
        return self._tracing_count


def function(func=None, jit_compile=True):
    """Compiles ``func`` into one XLA program, like ``tf.function``.

    Variables read inside become inputs of the program and Variables assigned inside are
    written back after each call; Variables may be created on the first call (lazily built
    layers, optimizer slots) but not on later traces. The function is traced again only for
    new input shapes or dtypes or new Python values among its arguments. A Python ``if`` on
    a traced Tensor is an error (use ``mk.cond``). Under a recording GradientTape, or with
    ``jit_compile=False``, the function runs eagerly.

    >>> v = mk.Variable(1.0)
    >>> @mk.function
    ... def step(x):
    ...     v.assign_add(x)
    ...     return v * 2.0
    >>> step(mk.constant(2.0))
    mk.Tensor(6.0, shape=(), dtype=float32)
    """
    if func is None:
        return lambda f: Function(f, jit_compile=jit_compile)
    return Function(func, jit_compile=jit_compile)

"""Tracing a Python function of Tensors and Variables once, into a pure program.

The function runs exactly once per trace, under ``jax.make_jaxpr``. The first time it
reads (or creates, or assigns) a Variable, the Variable's value is swapped for a traced
*placeholder*: an equation of the primitive ``mk_variable`` in the jaxpr, standing for the
value the Variable will have when the program runs. After the trace, every placeholder
equation is removed and its output becomes an input of the jaxpr; the final values of the
Variables the function assigned become outputs. So one trace yields

    program(state..., inputs...) -> (outputs..., new values of the assigned Variables...)

and the Variables it touches, with no second pass to discover them.

While tracing, values that do not depend on the inputs or on a Variable (``mk.ones(...)``,
initializers, constants) are computed eagerly (``jax.ensure_compile_time_eval``), as
TensorFlow does for constants: that is what lets a layer create its weights on the first
call. A Variable created during the trace keeps its concrete initial value and becomes
state of the program like any other. A trace with symbolic sizes (a None dimension of an
input signature) cannot compute eagerly what depends on them (``mk.zeros_like(x)``, a mean's
divisor), so there jax stages everything and minikeras computes constants op by op instead
(``backend.folding_constants``: its ops, creation ops and ``to_array`` compute eagerly what
involves no traced value and no symbolic size); a Variable created from a value that is
still traced raises, and the function is then traced for concrete shapes.

Each constant computed eagerly is a jax op compiled for its shape (5-25 ms the first time in a
process), so code that runs inside every trace keeps its constants off that path: gradient rules
broadcast a scalar zero, the tape's backward pass is inlined with its seeds as arguments
(``tape.compiled.replay_in_trace``), and ``xla_cpu``'s formulations build index constants with
NumPy. The classic MNIST CNN's first call compiles 7 small programs besides the step.
"""
import contextlib
import os
import traceback

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, Primitive, set_current_trace, take_current_trace

from minikeras import _context
from minikeras.tensor import Tensor, Variable, to_array
from minikeras.xla_cpu.compiler import tracing_as_jit

_variable_p = Primitive("mk_variable")
_variable_p.def_abstract_eval(lambda anchor, *, shape, dtype, index: jax.core.ShapedArray(shape, dtype))


class Trace:
    """Watches Variable reads, writes and creations while a function is traced once.

    It is ``_context.call_state.traces[-1]`` during the trace: ``Variable`` calls ``on_read``,
    ``on_create`` and ``on_assign``; ``mk.cond`` asks ``variables()`` and
    ``value_when_lifted(variable)`` to undo a branch's assignments.

    Attributes:
      lifted: every Variable the function touched, in the order first touched; each is an
        input of the program.
      created: the Variables the function created.
      assigned_ids: ids of the Variables it assigned.
    """

    def __init__(self, outer, anchor):
        self._outer = outer      # the make_jaxpr trace, where placeholders are staged
        self._anchor = anchor    # a traced scalar the placeholders hang on
        self.lifted = []
        self._lifted_ids = set()
        self._views = contextlib.ExitStack()  # this thread's view of the lifted Variables, closed by restore
        self._placeholders = {}  # id(variable) -> its placeholder
        self.created = []
        self.assigned_ids = set()

    def on_read(self, variable):
        if id(variable) not in self._lifted_ids:
            self._lift(variable)

    def on_create(self, variable):
        self.created.append(variable)
        self._lift(variable)

    def on_assign(self, variable):
        self.on_read(variable)
        self.assigned_ids.add(id(variable))

    def variables(self):
        """Every Variable this trace has lifted so far."""
        return list(self.lifted)

    def value_when_lifted(self, variable):
        """The traced placeholder that ``variable`` (lifted by this trace) started with."""
        return self._placeholders[id(variable)]

    def _lift(self, variable):
        value = variable._value
        self._lifted_ids.add(id(variable))
        with set_current_trace(self._outer):  # staged in the outermost jaxpr, even inside a vmap
            placeholder = _variable_p.bind(self._anchor, shape=tuple(value.shape), dtype=np.dtype(value.dtype),
                                           index=len(self.lifted))
        self._placeholders[id(variable)] = placeholder
        # only this thread sees the placeholder: another thread reading the Variable meanwhile
        # (a dataset's prefetch drawing random numbers) gets its concrete value
        self._views.enter_context(_context.variable_seen_as(variable, placeholder))
        self.lifted.append(variable)

    def restore(self):
        """Gives every touched Variable back the value this thread saw before the trace."""
        self._views.close()


class Traced:
    """The result of ``trace``: the program as a ClosedJaxpr of (state..., inputs...) ->
    (array outputs..., assigned values...), and what it needs to be called and unflattened.

    Attributes:
      jaxpr: the ClosedJaxpr; its state inputs follow ``variables``' order.
      variables: the lifted Variables, the assigned ones first.
      n_assigned: how many of ``variables`` the program writes.
      created: Variables created by the function during the trace.
      out_tree, out_static, out_is_array: the structure of the function's result: its leaves
        are Tensors where ``out_is_array`` is True, else the static values in ``out_static``.
    """

    def __init__(self, jaxpr, variables, n_assigned, created, out_tree, out_static, out_is_array):
        self.jaxpr = jaxpr
        self.variables = variables
        self.n_assigned = n_assigned
        self.created = created
        self.out_tree = out_tree
        self.out_static = out_static
        self.out_is_array = out_is_array


def _is_array_leaf(x):
    return isinstance(x, (Tensor, np.ndarray, jax.Array, np.generic))


def trace(function, args_treedef, leaves, dynamic_positions, dynamic_avals):
    """Runs ``function`` once on Tensors of ``dynamic_avals`` (at ``dynamic_positions`` among
    ``leaves``, the flattened ``(args, kwargs)`` of ``args_treedef``) and returns a ``Traced``.
    ``dynamic_avals`` may have symbolic sizes (``jax.export.symbolic_shape``)."""
    found = {}
    fold_constants = all(type(d) is int for aval in dynamic_avals for d in aval.shape)

    def body(anchor, *dynamic_values):
        with take_current_trace() as outer:
            pass
        context = Trace(outer, anchor)
        try:
            with _context.tracing(context):
                call_leaves = list(leaves)
                for position, value in zip(dynamic_positions, dynamic_values):
                    call_leaves[position] = Tensor(value)
                args, kwargs = jax.tree_util.tree_unflatten(args_treedef, call_leaves)
                # constants stay concrete (weights built on the first call), where sizes are known
                with jax.ensure_compile_time_eval() if fold_constants else contextlib.nullcontext():
                    out = function(*args, **kwargs)
                out_leaves, out_tree = jax.tree_util.tree_flatten(
                    out, is_leaf=lambda x: isinstance(x, (Tensor, Variable)))
                is_array = [_is_array_leaf(x) or isinstance(x, Variable) for x in out_leaves]
                arrays = [to_array(x) for x, a in zip(out_leaves, is_array) if a]
                assigned = [v for v in context.lifted if id(v) in context.assigned_ids]
                new_values = [v._value for v in assigned]
        finally:
            context.restore()
        found.update(context=context, out_tree=out_tree, is_array=is_array, assigned=assigned,
                     static=[None if a else x for a, x in zip(is_array, out_leaves)])
        return (*arrays, *new_values)

    with tracing_as_jit():  # the program is compiled by xla_cpu.jit: formulate its convolutions for it
        closed = jax.make_jaxpr(body)(jax.ShapeDtypeStruct((), np.float32), *dynamic_avals)
    context = found["context"]
    assigned_ids = {id(v) for v in found["assigned"]}
    variables = found["assigned"] + [v for v in context.lifted if id(v) not in assigned_ids]
    position = {id(v): i for i, v in enumerate(context.lifted)}
    jaxpr = _with_state_inputs(closed, [position[id(v)] for v in variables])
    return Traced(jaxpr, variables, len(found["assigned"]), context.created, found["out_tree"], found["static"],
                  found["is_array"])


def _with_state_inputs(closed, order):
    """``closed`` (anchor, inputs...) with its placeholder equations turned into inputs: the
    placeholder of lifted Variable ``order[0]`` first, then ``order[1]``, ..., then the inputs."""
    jaxpr = closed.jaxpr
    placeholders = {}
    eqns = []
    for eqn in jaxpr.eqns:
        if eqn.primitive is _variable_p:
            placeholders[eqn.params["index"]] = eqn.outvars[0]
        else:
            eqns.append(eqn)
    state = [placeholders[i] for i in order]
    invars = state + list(jaxpr.invars[1:])  # the anchor goes: only placeholders used it
    debug = jaxpr.debug_info
    if debug is not None and debug.arg_names is not None:
        debug = debug._replace(arg_names=tuple(f"state[{i}]" for i in range(len(state))) + tuple(debug.arg_names[1:]))
    return ClosedJaxpr(jaxpr.replace(invars=invars, eqns=eqns, debug_info=debug), closed.consts)


_LIBRARIES = tuple(os.path.dirname(m.__file__) + os.sep for m in (jax, np))
_MINIKERAS = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def describe_failure(error):
    """Why a trace failed, for messages: ``error`` and where it was raised, the innermost frame
    outside jax and NumPy (the op that needed a concrete size) and, when that is in minikeras,
    the user's line that called it."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(_LIBRARIES)]
    where = ""
    if frames:
        where = f" in {_frame(frames[-1])}"
        if frames[-1].filename.startswith(_MINIKERAS):
            outside = [f for f in frames if not f.filename.startswith(_MINIKERAS)]
            if outside:
                where += f", called from {_frame(outside[-1])}"
    message = str(error).split("\n")[0]
    return f"{type(error).__name__}{where}: {message}"


def _frame(frame):
    return f"{frame.name} ({os.path.basename(frame.filename)}:{frame.lineno})"

"""``if`` statements, conditional expressions and ``and``/``or``/``not`` in converted code.

With a traced Tensor condition they become ``mk.cond`` machinery (``lax.switch`` with no
tape recording, the selected form under one); otherwise they are Python's.
"""

import jax
import jax.numpy as jnp

from minikeras import _context
from minikeras.autograph.undefined import Undefined
from minikeras.backend import is_tracer
from minikeras.ops.control import ZEROS_LIKE_OTHER_BRANCH, run_branches, select_branches
from minikeras.ops.elementwise import logical_and, logical_not, logical_or
from minikeras.tensor import Tensor, Variable, to_array


def traced(value):
    """Whether ``value`` is a Tensor (or Variable) whose value is traced: unknown until the program runs."""
    if isinstance(value, Variable):
        value = value.value()
    return isinstance(value, Tensor) and is_tracer(value._value)


# -- logical operators ----------------------------------------------------------------------
def and_(left, right):
    """``left() and right()``, as ``mk.logical_and`` when a side is a traced Tensor."""
    a = left()
    if traced(a):
        return logical_and(a, right())
    if not a:
        return a
    return right()


def or_(left, right):
    """``left() or right()``, as ``mk.logical_or`` when a side is a traced Tensor."""
    a = left()
    if traced(a):
        return logical_or(a, right())
    if a:
        return a
    return right()


def not_(value):
    """``not value``, as ``mk.logical_not`` for a traced Tensor."""
    if traced(value):
        return logical_not(value)
    return not value


def if_exp(test, body, orelse, lineno):
    """``body() if test else orelse()``; ``mk.cond`` for a traced Tensor test."""
    if traced(test):
        return _tensor_cond(test, body, orelse, f"the conditional expression at line {lineno}")
    return body() if test else orelse()


# -- if ---------------------------------------------------------------------------------------
def probing_loop_body():
    """The context in which ``loops`` traces a loop body once before staging the loop (per
    thread, ``_context.probing``): a ``return`` inside it has no value yet on the other branch,
    and the loop carries ``do_return`` to say which value counts."""
    return _context.probing("loop_body")


def if_stmt(test, body, orelse, get_state, set_state, names, lineno):
    """An ``if`` statement: ``mk.cond`` semantics for a traced Tensor test, else Python's."""
    if not traced(test):
        if test:
            body()
        else:
            orelse()
        return
    init = get_state()

    def branch(fn):
        def run():
            set_state(init)
            fn()
            return get_state()
        return run

    set_state(_tensor_cond(test, branch(body), branch(orelse), f"the `if` at line {lineno}", names))


def _tensor_cond(test, body, orelse, where, names=None):
    pred = to_array(test)
    if pred.shape not in ((), (1,)):
        raise ValueError(f"{where}: the condition must be a scalar, received shape {tuple(pred.shape)} "
                         "(use mk.reduce_any / mk.reduce_all, or mk.where for elementwise selection)")
    pred = Tensor(pred.reshape(()).astype(bool))

    def merge(position, leaves):
        name = names[position] if names and position < len(names) else str(position)
        undefined = [isinstance(x, Undefined) for x in leaves]
        if name == "retval_" and any(undefined) and not all(undefined):
            if not _context.is_probing("loop_body"):  # TensorFlow's AutoGraph refuses it: a path returning nothing
                missing = "else" if undefined[-1] else "main"
                raise ValueError(f"{where}: the {missing} branch must also have a return statement. (The condition "
                                 "is a traced Tensor, so both branches are in the program, and a function cannot "
                                 "return a Tensor on one path and nothing on the other: return a value on both.)")
            if all(u or isinstance(x, (Tensor, jax.core.ShapedArray)) for u, x in zip(undefined, leaves)):
                return ZEROS_LIKE_OTHER_BRANCH  # the branch that did not return: do_return says which value counts
        if any(undefined):
            missing = "else" if undefined[-1] else "true"
            return Undefined(name, f"'{name}' must also be initialized in the {missing} branch ({where} has a "
                                   "traced Tensor condition, so both branches run in the program)")
        first = leaves[0]
        if all(x is first or (not isinstance(x, Tensor) and x == first) for x in leaves):
            return first
        raise ValueError(f"{where}: '{name}' is {leaves[0]!r} in the true branch and {leaves[1]!r} in the else "
                         "branch; with a traced Tensor condition a variable must be a Tensor (or the same Python "
                         "value) in both branches")

    if _context.call_state.tapes:
        return select_branches(pred, body, orelse, merge=merge)
    index = Tensor(jnp.logical_not(pred._value).astype(jnp.int32))  # branch 0 is the true one
    return run_branches(index, [body, orelse], where, ("true branch", "else branch"), merge=merge)

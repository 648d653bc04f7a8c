"""How a ``keras.ops`` function meets its inputs: symbolic tensors and pure jax forwards.

    @keras_op("softplus")
    def softplus(x):
        return jax_forward("softplus", jax.nn.softplus, x)

``keras_op(name)`` makes a function symbolic-aware: called on a ``KerasTensor`` (``mk.Input``)
anywhere in its arguments, it records ONE node of the functional graph (its output shape
traced abstractly, as every minikeras op on symbolic tensors) whose operation calls the
function again on values, as Keras 3 records its ``Operation``s.

``jax_forward(name, fn, *inputs, **params)`` runs ``fn(*arrays, **params)`` (a pure jax
function of the inputs' arrays; ``params`` static, lists made tuples) as one recorded op
(``ops.jax_call``): its gradient is ``jax.vjp`` of ``fn``, itself recorded, so every order is
differentiable on the tape. It is for ops minikeras has no primitive of; the others call the
primitives. A TypeError or ValueError from jax (an int32 input to ``sigmoid``) is raised again
naming the op and its inputs' shapes and dtypes.
"""
import functools

import jax

from minikeras.backend import epsilon
from minikeras.keras.ops.op_nodes import node_config
from minikeras.ops.jax_call import call_jax
from minikeras.symbolic import Node, OpCall, any_symbolic, output_spec
from minikeras.tensor import Tensor, Variable, to_array


class _KerasOp:
    """A ``keras.ops`` function as the op of a graph node: called with the call's positional
    arguments and keywords, as two values (``OpCall`` passes its inputs positionally)."""

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def __call__(self, args, kwargs):
        return self.fn(*args, **kwargs)

    def node_config(self, node_name, args, kwargs):
        """How a functional model's config writes this call (``op_nodes.node_config``)."""
        return node_config(self.name, node_name, self.fn, args, kwargs)


def _arrays(structure):
    return jax.tree_util.tree_map(lambda x: x._value if isinstance(x, Tensor) else x, structure,
                                  is_leaf=lambda x: isinstance(x, Tensor))


def keras_op(name):
    """Decorates a ``keras.ops`` function so that symbolic inputs record a graph node."""
    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if any_symbolic((args, kwargs)):
                out = output_spec(lambda *a, **k: _arrays(fn(*a, **k)), args, kwargs, f"keras.ops.{name}")
                Node(OpCall(_KerasOp(name, op), {}), (args, kwargs), {}, out)
                return out
            return fn(*args, **kwargs)
        return op
    return decorate


def _hashable(value):
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


def jax_forward(name, fn, *inputs, constant=(), **params):
    """``fn(*arrays, **params)`` recorded as one op named ``name``; one Tensor, or a tuple of
    Tensors when ``fn`` returns a tuple. ``constant``: positions never differentiated.

    The compiled programs are kept per ``epsilon()`` too: a forward that reads Keras's epsilon
    (the cross-entropies' clip) reads it while traced."""
    def pure(*arrays):
        out = fn(*arrays, **params)
        return out if isinstance(out, tuple) else (out,)

    key = (name, fn, _hashable(params), tuple(constant), epsilon())
    inputs = [x if isinstance(x, (Tensor, Variable)) else to_array(x) for x in inputs]
    try:
        outs = call_jax(pure, inputs, name=name, constant=constant, key=key)
    except (TypeError, ValueError) as error:
        if type(error) not in (TypeError, ValueError) or str(error).startswith("keras.ops."):
            raise
        shapes = ", ".join(f"{tuple(x.shape)} {x.dtype.name}" for x in inputs if hasattr(x, "shape"))
        raise type(error)(f"keras.ops.{name} (inputs: {shapes}): {error}") from error
    return outs[0] if len(outs) == 1 else outs


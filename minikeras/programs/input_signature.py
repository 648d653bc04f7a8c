"""``mk.function(input_signature=...)``: binding a call's arguments to a list of TensorSpecs.

As in ``tf.function``, a function with an input signature takes exactly the Tensors the
signature describes: Python numbers and arrays are converted to the spec's dtype, a Tensor of
another dtype or an incompatible shape is a TypeError naming the argument, and a ``None``
dimension accepts any size. ``mk.function`` traces the signature once with symbolic sizes
for its None dimensions (``programs.signatures``) and XLA compiles that trace for each
concrete shape.
"""
import inspect

import jax

from minikeras.tensor import Tensor, Variable, to_array
from minikeras.tensor_spec import TensorSpec


def check_signature(name, input_signature):
    """``input_signature`` as a tuple (of TensorSpecs or nests of them); a TypeError otherwise."""
    if not isinstance(input_signature, (list, tuple)):
        raise TypeError(f"mk.function({name}): input_signature must be a list or tuple of mk.TensorSpec, received "
                        f"{input_signature!r}")
    for spec in jax.tree_util.tree_leaves(input_signature, is_leaf=lambda s: isinstance(s, TensorSpec)):
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"mk.function({name}): input_signature must contain only mk.TensorSpec objects, "
                            f"received {spec!r}")
    return tuple(input_signature)


def bind(name, python_function, input_signature, args, kwargs):
    """The positional arguments of a call, each checked against (and converted to) its spec."""
    if kwargs:
        try:
            bound = inspect.signature(python_function).bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"mk.function({name}): {error}") from None
        args = bound.args
        if bound.kwargs:
            raise TypeError(f"mk.function({name}) with an input_signature takes its arguments by position or "
                            f"name, not as **kwargs: {sorted(bound.kwargs)}")
    if len(args) != len(input_signature):
        raise TypeError(f"mk.function({name}) has an input_signature of {len(input_signature)} argument(s), "
                        f"received {len(args)}")
    return tuple(_bind_one(name, spec, arg) for spec, arg in zip(input_signature, args))


def _bind_one(name, spec, arg):
    try:
        return jax.tree_util.tree_map(lambda s, value: _convert(name, s, value), spec, arg,
                                      is_leaf=lambda s: isinstance(s, TensorSpec))
    except ValueError as error:  # the argument's nest differs from the spec's
        raise TypeError(f"mk.function({name}): an argument does not have the structure of its input_signature "
                        f"entry {spec}: {error}") from None


def _convert(name, spec, value):
    if isinstance(value, (Tensor, Variable)):
        if value.dtype != spec.dtype:
            raise TypeError(f"mk.function({name}): an argument of dtype {value.dtype.name} does not match its "
                            f"input_signature entry {spec}")
        tensor = value if isinstance(value, Tensor) else value.value()
    else:
        tensor = Tensor(to_array(value, spec.dtype))
    if not spec.shape_matches(tensor.shape):
        raise TypeError(f"mk.function({name}): an argument of shape {tensor.shape} does not match its "
                        f"input_signature entry {spec}")
    return tensor

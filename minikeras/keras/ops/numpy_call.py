"""How ``keras.ops.numpy`` and ``keras.ops.math`` ops run: Keras 3's input conversion and one
recorded jax forward per op.

``keras_input(x)`` converts an argument as Keras 3's JAX backend does (``convert_to_tensor``):
Tensors and Variables stay (a Variable is read when the op runs, recorded as any read); NumPy
arrays, Python numbers and lists become jax arrays, Python numbers weakly typed (``x + 1.5``
keeps a float16 ``x`` float16, as Keras on JAX). ``run(name, forward, *inputs, **params)`` is
``keras_op.jax_forward`` on converted inputs (``forward``: a module-level pure jax function, so
that its compiled programs are kept per op), with any error jax raises on bad axes or shapes
raised again as a ValueError that names the op and its inputs' shapes and dtypes.
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras.keras.ops.keras_op import jax_forward, keras_op
from minikeras.tensor import Tensor, Variable, to_array


def keras_input(x):
    """``x`` as Keras 3's JAX backend converts it (see the module docstring)."""
    if isinstance(x, (Tensor, Variable, jax.Array)):
        return x
    return jnp.asarray(x)


def value(x):
    """``x``'s jax array (a Variable read), for ops that run eagerly outside a recorded op."""
    x = keras_input(x)
    return x.value()._value if isinstance(x, Variable) else to_array(x)


def describe(inputs):
    return ", ".join(f"{tuple(np.shape(x))} {jnp.result_type(x).name if hasattr(x, 'dtype') else type(x).__name__}"
                     for x in inputs)


def run(name, forward, *inputs, **params):
    """``forward(*arrays, **params)`` as one recorded op (see the module docstring)."""
    try:
        inputs = [keras_input(x) for x in inputs]
    except TypeError as error:
        raise TypeError(f"keras.ops.{name}: an input is not a tensor, array or number: {error}") from error
    try:
        return jax_forward(name, forward, *inputs, **params)
    except (IndexError, np.exceptions.AxisError) as error:
        raise ValueError(f"keras.ops.{name} (inputs: {describe(inputs)}): {error}") from error


def define(name, forward, signature, doc):
    """A ``keras.ops`` function ``name`` of the array arguments ``signature`` (a tuple of names,
    all positional) that runs ``forward``; symbolic-aware (``keras_op``)."""
    if signature == ("x",):
        def op(x):
            return run(name, forward, x)
    elif signature == ("x1", "x2"):
        def op(x1, x2):
            return run(name, forward, x1, x2)
    elif signature == ("x", "y"):
        def op(x, y):
            return run(name, forward, x, y)
    else:
        raise ValueError(f"define: no template for the signature {signature}")
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return keras_op(name)(op)


def to_list(out):
    """A tuple of Tensors (what ``jax_forward`` returns for several outputs) as a list."""
    return list(out) if isinstance(out, tuple) else [out]


def as_axis(axis):
    """An axis argument as jax takes it (a list becomes a tuple)."""
    return tuple(axis) if isinstance(axis, list) else axis

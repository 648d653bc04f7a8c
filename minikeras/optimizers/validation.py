"""Checks on what users pass to ``apply_gradients``: errors that name the variable at fault."""
import jax.numpy as jnp
import numpy as np

from minikeras.tensor import Tensor, Variable, to_array

_FLOAT_DTYPES = frozenset(np.dtype(d) for d in ("float16", jnp.bfloat16, "float32", "float64"))


class GradientDTypeError(TypeError, ValueError):
    """A gradient (or variable) that is not floating point; both a TypeError and a ValueError."""


def check_variables(variables):
    seen = set()
    for i, v in enumerate(variables):
        if not isinstance(v, Variable):
            raise TypeError(f"Optimizers update mk.Variable objects; variable #{i} is a {type(v).__name__}. Pass "
                            "model.trainable_variables (or your mk.Variable objects), not their values.")
        if v._value.dtype not in _FLOAT_DTYPES:
            raise GradientDTypeError(f"Variable '{v.path}' has dtype {v.dtype.name}; optimizers only update "
                                     "floating-point variables")
        if id(v) in seen:
            raise ValueError(f"Variable '{v.path}' appears twice in the list of variables to update")
        seen.add(id(v))


def gradient_array(grad, variable, index):
    if isinstance(grad, Tensor):
        array = grad._value
    elif isinstance(grad, Variable):
        array = grad._read_array()
    else:
        array = to_array(grad)
    if array.dtype not in _FLOAT_DTYPES:
        raise GradientDTypeError(
            f"The gradient for variable '{variable.path}' (#{index}) has dtype {np.dtype(array.dtype).name}; "
            "gradients must be floating point. Was the loss computed with integer ops?")
    if array.shape != variable._value.shape:
        raise ValueError(f"The gradient for variable '{variable.path}' (#{index}) has shape {tuple(array.shape)}, but "
                         f"the variable has shape {variable.shape}")
    if array.dtype != variable._value.dtype:
        array = array.astype(variable._value.dtype)
    return array

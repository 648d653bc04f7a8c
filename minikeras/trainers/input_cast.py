"""Integer arrays given to a model whose inputs are floating, cast to the ``Input``'s dtype.

tf.keras takes raw ``uint8`` images (or ``int32`` arrays) in ``fit``/``evaluate``/``predict``
of a float model and casts them to the Input's dtype; without the cast the first layer's
product would mix an integer and a float operand. Only NumPy arrays held in memory are cast,
on the host, once per call (a Dataset's batches are the Dataset's business).
"""
import numpy as np


def cast_integer_inputs(model, x):
    """``x`` with each integer NumPy array whose ``Input`` (of ``model``, a functional model or a
    Sequential with an Input) is floating cast to that dtype; anything else unchanged."""
    inputs = getattr(model, "inputs", None)
    if not inputs or x is None:
        return x
    if isinstance(x, np.ndarray):
        return _cast(x, inputs[0]) if len(inputs) == 1 else x
    if isinstance(x, (list, tuple)) and len(x) == len(inputs):
        return type(x)(_cast(value, spec) for value, spec in zip(x, inputs))
    if isinstance(x, dict):
        by_name = {getattr(spec, "name", None): spec for spec in inputs}
        return {key: _cast(value, by_name[key]) if key in by_name else value for key, value in x.items()}
    return x


def _cast(value, spec):
    dtype = np.dtype(str(getattr(spec, "dtype", "float32")))
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and dtype.kind == "f":
        return value.astype(dtype)
    return value

"""``mk.add_n``: the elementwise sum of a list of Tensors of one shape and dtype."""
from minikeras.errors import InvalidArgumentError
from minikeras.ops.creation import convert_to_tensor
from minikeras.ops.math import add
from minikeras.tensor import Tensor, Variable


def add_n(inputs, name=None):
    """Adds ``inputs`` (Tensors, Variables, arrays or numbers of the same shape and dtype)
    elementwise, as ``tf.add_n``; differentiable in each input.

    >>> mk.add_n([mk.ones(2), mk.ones(2), mk.ones(2)])
    mk.Tensor([3. 3.], shape=(2,), dtype=float32)

    Raises:
      ValueError: ``inputs`` is empty or not a list.
      InvalidArgumentError: the inputs differ in shape or dtype.
    """
    if isinstance(inputs, (Tensor, Variable)) or not hasattr(inputs, "__iter__"):
        raise ValueError("Inputs must be an iterable of at least one Tensor/IndexedSlices with the same dtype and "
                         "shape.")
    tensors = [x if isinstance(x, (Tensor, Variable)) else convert_to_tensor(x) for x in inputs]
    if not tensors:
        raise ValueError("Inputs must be an iterable of at least one Tensor/IndexedSlices with the same dtype and "
                         "shape.")
    first = tensors[0]
    for k, t in enumerate(tensors[1:], start=1):
        if t.dtype != first.dtype:
            raise InvalidArgumentError(None, None, f"cannot compute AddN as input #{k}(zero-based) was expected to "
                                       f"be a {first.dtype.name} tensor but is a {t.dtype.name} tensor")
        if tuple(t.shape) != tuple(first.shape):
            raise InvalidArgumentError(None, None, "Inputs to operation AddN must have the same size and shape.  "
                                       f"Input 0: {list(first.shape)} != input {k}: {list(t.shape)}")
    total = first if isinstance(first, Tensor) else first.value()
    for t in tensors[1:]:
        total = add(total, t)
    return total

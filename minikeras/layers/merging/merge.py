"""Merge layers: one output from a list of inputs (Keras's ``Add``, ``Concatenate``, ``Dot``, ...),
and their function forms (``mk.layers.add([a, b])`` is ``Add()([a, b])``)."""
from minikeras.layers.base import Layer
from minikeras.ops.array import concat, expand_dims, transpose
from minikeras.ops.creation import ones_like, zeros_like
from minikeras.ops.elementwise import logical_or, rsqrt
from minikeras.ops.linalg import matmul
from minikeras.ops.math import (
    add as _add,
    maximum as _maximum,
    minimum as _minimum,
    multiply as _multiply,
    subtract as _subtract,
)
from minikeras.ops.reduce import reduce_any, reduce_sum
from minikeras.ops.reshape import reshape
from minikeras.saving.registry import register_builtin


class Merge(Layer):
    """Base of the merge layers: ``call`` receives the list of inputs and combines them with
    ``_merge``. Inputs of the same shape (or shapes that broadcast)."""

    min_inputs = 1
    exact_inputs = None
    broadcasts = True  # elementwise: the inputs' shapes must broadcast together

    def compute_mask(self, inputs, mask=None):
        """The elementwise OR of the inputs' masks; None unless every input has one (Keras 3)."""
        if mask is None:
            return None
        self._check_masks(inputs, mask)
        if any(m is None for m in mask):
            return None
        output_mask = mask[0]
        for m in mask[1:]:
            output_mask = logical_or(output_mask, m)
        return output_mask

    def _check_masks(self, inputs, mask):
        if not isinstance(mask, (list, tuple)) or not isinstance(inputs, (list, tuple)) or len(mask) != len(inputs):
            raise ValueError(f"{type(self).__name__} '{self.name}': `mask` should be a list with one mask (or None) "
                             f"per input. Received: {len(inputs) if isinstance(inputs, (list, tuple)) else 1} "
                             f"input(s) and mask={mask!r}")

    def _check_inputs(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"A merge layer ({type(self).__name__} '{self.name}') should be called on a list of "
                             f"inputs, received {inputs!r}")
        if self.exact_inputs is not None and len(inputs) != self.exact_inputs:
            raise ValueError(f"A `{type(self).__name__}` layer should be called on exactly {self.exact_inputs} "
                             f"inputs. Received: inputs={list(inputs)!r}")
        if len(inputs) < self.min_inputs:
            raise ValueError(f"A merge layer ({type(self).__name__} '{self.name}') should be called on a list of at "
                             f"least {self.min_inputs} input(s), received {len(inputs)}")

    def build(self, input_shape):
        self._check_inputs(input_shape)
        if self.broadcasts and all(isinstance(s, (list, tuple)) for s in input_shape):
            self._check_broadcast(input_shape)
        self.built = True

    def _check_broadcast(self, input_shape):
        shapes = [tuple(s) for s in input_shape]
        rank = max(len(s) for s in shapes)
        for dims in zip(*[(1,) * (rank - len(s)) + s for s in shapes]):
            if len({d for d in dims if d not in (None, 1)}) > 1:
                raise ValueError(f"{type(self).__name__} '{self.name}': inputs have incompatible shapes. Received "
                                 f"shapes {', '.join(str(s) for s in shapes)}")

    def call(self, inputs):
        self._check_inputs(inputs)
        return self._merge(list(inputs))

    def compute_output_shape(self, input_shape):
        """The inputs' shapes broadcast together (None where a size is unknown)."""
        rank = max(len(shape) for shape in input_shape)
        out = []
        for dims in zip(*[(1,) * (rank - len(shape)) + tuple(shape) for shape in input_shape]):
            known = {d for d in dims if d != 1}
            out.append(None if None in known else (known.pop() if known else 1))
        return tuple(out)


def _fold(op, inputs):
    out = inputs[0]
    for x in inputs[1:]:
        out = op(out, x)
    return out


@register_builtin("minikeras.layers")
class Add(Merge):
    """The element-wise sum of its inputs: ``Add()([x1, x2])``."""

    def _merge(self, inputs):
        return _fold(_add, inputs)


@register_builtin("minikeras.layers")
class Subtract(Merge):
    """``inputs[0] - inputs[1]`` (exactly two inputs)."""

    exact_inputs = 2

    def _merge(self, inputs):
        return _subtract(inputs[0], inputs[1])


@register_builtin("minikeras.layers")
class Multiply(Merge):
    """The element-wise product of its inputs."""

    def _merge(self, inputs):
        return _fold(_multiply, inputs)


@register_builtin("minikeras.layers")
class Average(Merge):
    """The element-wise mean of its inputs."""

    def _merge(self, inputs):
        return _fold(_add, inputs) / float(len(inputs))


@register_builtin("minikeras.layers")
class Maximum(Merge):
    """The element-wise maximum of its inputs."""

    def _merge(self, inputs):
        return _fold(_maximum, inputs)


@register_builtin("minikeras.layers")
class Minimum(Merge):
    """The element-wise minimum of its inputs."""

    def _merge(self, inputs):
        return _fold(_minimum, inputs)


@register_builtin("minikeras.layers")
class Concatenate(Merge):
    """Its inputs joined along ``axis`` (default the last): shapes must agree elsewhere."""

    broadcasts = False

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def build(self, input_shape):
        self._check_inputs(input_shape)
        ranks = {len(s) for s in input_shape}
        if len(ranks) > 1:
            raise ValueError(f"A `Concatenate` layer ('{self.name}') requires inputs with matching shapes except for "
                             f"the concatenation axis. Received: input_shape={[tuple(s) for s in input_shape]}")
        axis = self.axis % len(input_shape[0])
        for shape in input_shape[1:]:
            for i, (m, n) in enumerate(zip(input_shape[0], shape)):
                if i != axis and m is not None and n is not None and m != n:
                    raise ValueError(f"A `Concatenate` layer ('{self.name}') requires inputs with matching shapes "
                                     f"except for the concatenation axis. Received: input_shape={list(input_shape)}")
        self.built = True

    def _merge(self, inputs):
        return concat(inputs, axis=self.axis)

    def compute_mask(self, inputs, mask=None):
        """Keras 3's: each input's mask (all True where it has none) broadcast to the input's
        shape, concatenated along ``axis``, then any() over the last axis."""
        if mask is None:
            return None
        self._check_masks(inputs, mask)
        if all(m is None for m in mask):
            return None
        masks = []
        for x, m in zip(inputs, mask):
            if m is None:
                masks.append(ones_like(x, dtype="bool"))
            elif m.ndim < x.ndim:
                masks.append(logical_or(expand_dims(m, -1), zeros_like(x, dtype="bool")))
            else:
                masks.append(m)
        return reduce_any(concat(masks, axis=self.axis), axis=-1)

    def compute_output_shape(self, input_shape):
        axis = self.axis % len(input_shape[0])
        sizes = [shape[axis] for shape in input_shape]
        out = list(input_shape[0])
        out[axis] = None if None in sizes else sum(sizes)
        return tuple(out)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


@register_builtin("minikeras.layers")
class Dot(Merge):
    """The dot product of two batches of tensors along ``axes`` (an int, or one axis per input;
    the batch axis 0 is never contracted). ``normalize=True`` takes L2-normalized inputs first
    (cosine proximity). ``(batch, n)`` and ``(batch, n)`` give ``(batch, 1)``.
    """

    broadcasts = False
    exact_inputs = 2

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        self._axes_given = list(axes) if isinstance(axes, tuple) else axes
        if isinstance(axes, int):
            axes = (axes, axes)
        if not (isinstance(axes, (list, tuple)) and len(axes) == 2 and all(isinstance(a, int) for a in axes)):
            raise TypeError(f"Dot '{self.name}': `axes` must be an int or a pair of ints, received {axes!r}")
        self.axes = tuple(axes)
        self.normalize = bool(normalize)

    def compute_mask(self, inputs, mask=None):
        """None: the contraction leaves no per-step mask (Keras 3)."""
        return None

    def _merge(self, inputs):
        x, y = inputs
        ax = self.axes[0] % x.ndim
        ay = self.axes[1] % y.ndim
        if 0 in (ax, ay):
            raise ValueError(f"Dot '{self.name}' cannot contract the batch axis 0, received axes={self.axes}")
        if x.shape[ax] != y.shape[ay]:
            raise ValueError(f"Dot '{self.name}': the contracted dimensions differ: {x.shape}[{ax}] vs "
                             f"{y.shape}[{ay}]")
        if self.normalize:
            x = x * rsqrt(_maximum(reduce_sum(x * x, axis=ax, keepdims=True), 1e-12))
            y = y * rsqrt(_maximum(reduce_sum(y * y, axis=ay, keepdims=True), 1e-12))
        batch = x.shape[0]
        x_rest = [d for i, d in enumerate(x.shape) if i not in (0, ax)]
        y_rest = [d for i, d in enumerate(y.shape) if i not in (0, ay)]
        x_perm = [0] + [i for i in range(1, x.ndim) if i != ax] + [ax]
        y_perm = [0, ay] + [i for i in range(1, y.ndim) if i != ay]
        xm = reshape(transpose(x, x_perm), (batch, _prod(x_rest), x.shape[ax]))
        ym = reshape(transpose(y, y_perm), (batch, y.shape[ay], _prod(y_rest)))
        out = matmul(xm, ym)
        shape = (batch,) + tuple(x_rest) + tuple(y_rest)
        return reshape(out, shape if len(shape) > 1 else (batch, 1))

    def compute_output_shape(self, input_shape):
        x, y = (tuple(shape) for shape in input_shape)
        ax, ay = self.axes[0] % len(x), self.axes[1] % len(y)
        shape = x[:1] + tuple(d for i, d in enumerate(x) if i not in (0, ax)) + \
            tuple(d for i, d in enumerate(y) if i not in (0, ay))
        return shape if len(shape) > 1 else (x[0], 1)

    def get_config(self):
        return {**super().get_config(), "axes": self._axes_given, "normalize": self.normalize}


def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def add(inputs, **kwargs):
    """``Add(**kwargs)(inputs)``."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """``Subtract(**kwargs)(inputs)``."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """``Multiply(**kwargs)(inputs)``."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """``Average(**kwargs)(inputs)``."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """``Maximum(**kwargs)(inputs)``."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """``Minimum(**kwargs)(inputs)``."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis=axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, normalize=False, **kwargs):
    """``Dot(axes=axes, normalize=normalize, **kwargs)(inputs)``."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)

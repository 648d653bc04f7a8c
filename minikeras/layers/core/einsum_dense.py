"""EinsumDense: a dense layer whose product is an einsum equation (Keras 3's)."""
import re

import numpy as np

from minikeras import activations, constraints, initializers, regularizers
from minikeras.layers.base import Layer
from minikeras.layers.lora import LoRAMixin, LoRAWeight
from minikeras.ops.einsum import einsum
from minikeras.saving.registry import register_builtin


@register_builtin("minikeras.layers")
class EinsumDense(LoRAMixin, Layer):
    """``activation(einsum(equation, inputs, kernel) + bias)``.

    Args:
      equation: ``"ab,bc->ac"``-style, the input's axes first, then the kernel's; ``...`` may stand
        for leading (``"...b,bc->...c"``) or trailing (``"ab...,bc->ac..."``) input axes.
      output_shape: the output's shape without the batch axis (and without the axes ``...``
        stands for); None for a size taken from the input. An int for a 1-D shape.
      activation: a name or callable (none by default).
      bias_axes: the output axes (letters of the output spec) that get a bias; None for no bias.
      kernel_initializer ('glorot_uniform'), bias_initializer ('zeros'), kernel_regularizer,
      bias_regularizer: as Dense's. A variance-scaling kernel initializer counts the kernel axes
        shared with the input as fan-in and those of the output as fan-out (Keras 3).
      lora_rank, lora_alpha: LoRA enabled at build (``minikeras.layers.lora``): the factors are
        ``kernel.shape[:-1] + (rank,)`` and ``(rank, kernel.shape[-1])``.

    The kernel's shape comes from the equation: each kernel letter takes its size from the
    output shape, or from the input where the output does not have it.

    >>> layer = mk.layers.EinsumDense("abc,cde->abde", output_shape=(None, 4, 8), bias_axes="de")
    >>> layer(mk.ones((2, 5, 16))).shape, layer.kernel.shape, layer.bias.shape
    ((2, 5, 4, 8), (16, 4, 8), (4, 8))
    """

    supports_masking = False  # as Keras 3's EinsumDense: a mask does not pass through it
    kernel = LoRAWeight("kernel")

    def __init__(self, equation, output_shape, activation=None, bias_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, lora_rank=None, lora_alpha=None, quantization_config=None, **kwargs):
        super().__init__(**kwargs)
        if quantization_config is not None:
            raise NotImplementedError(f"EinsumDense '{self.name}': quantization is not supported (received "
                                      f"quantization_config={quantization_config!r})")
        self._set_lora(lora_rank, lora_alpha)
        self.equation = equation
        if isinstance(output_shape, (int, np.integer)):
            self.partial_output_shape = (int(output_shape),)
        else:
            self.partial_output_shape = tuple(None if n is None else int(n) for n in output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        analyze_equation(equation, bias_axes, (None,) * 26, self.partial_output_shape, check_only=True)
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        kernel_shape, bias_shape, _, input_axes, output_axes = analyze_equation(
            self.equation, self.bias_axes, tuple(input_shape), self.partial_output_shape)
        if any(n is None for n in kernel_shape):
            raise ValueError(f"EinsumDense '{self.name}': the kernel shape {tuple(kernel_shape)} is not fully known "
                             f"for input shape {tuple(input_shape)}; give its sizes in output_shape")
        self.kernel = self.add_weight("kernel", tuple(kernel_shape), _fanned(self.kernel_initializer, input_axes,
                                                                            output_axes),
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if bias_shape is not None:
            self.bias = self.add_weight("bias", tuple(bias_shape), self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True
        self._build_lora()

    def call(self, inputs):
        x = einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            x = x + self.bias
        return self.activation(x) if self.activation is not None else x

    def compute_output_shape(self, input_shape):
        return tuple(analyze_equation(self.equation, self.bias_axes, tuple(input_shape), self.partial_output_shape)[2])

    def get_config(self):
        return {**super().get_config(), "output_shape": self.partial_output_shape, "equation": self.equation,
                "activation": activations.serialize(self.activation), "bias_axes": self.bias_axes,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint), **self._lora_config()}


def _fanned(initializer, input_axes, output_axes):
    """``initializer`` drawing with Keras 3's fans for an einsum kernel: a variance-scaling
    initializer draws a (fan_in, fan_out) matrix whose entries are laid out in the kernel's shape
    (the draws are independent, so only the variance depends on the fans)."""
    if not isinstance(initializer, initializers.VarianceScaling):
        return initializer

    def draw(shape, dtype=None):
        fan_in = int(np.prod([shape[i] for i in input_axes], dtype=np.int64))
        fan_out = int(np.prod([shape[i] for i in output_axes], dtype=np.int64))
        matrix = np.asarray(initializer((fan_in, fan_out), dtype=dtype))
        grouped = matrix.reshape([shape[i] for i in input_axes] + [shape[i] for i in output_axes])
        return np.transpose(grouped, np.argsort(list(input_axes) + list(output_axes)))
    return draw


def analyze_equation(equation, bias_axes, input_shape, output_shape, check_only=False):
    """``(kernel_shape, bias_shape, full_output_shape, input_axes, output_axes)`` of an
    EinsumDense (Keras 3's ``_analyze_einsum_string``); ``input_axes``/``output_axes`` are the
    kernel axes shared with the input / the output."""
    dotted = re.sub(r"\.\.\.", "0", equation)
    for pattern, left in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)$", False),
                          ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)$", True),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0$", False)):
        match = re.match(pattern, dotted)
        if match:
            break
    else:
        raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
                         "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")
    if check_only:
        return None
    input_spec, weight_spec, output_spec = match.groups()
    elided = len(input_shape) - len(input_spec)
    output_shape = [input_shape[0]] + list(output_shape)
    if elided > 0 and left:
        for i in range(1, elided):
            output_shape.insert(1, input_shape[i])
    elif elided > 0:
        for i in range(len(input_shape) - elided, len(input_shape)):
            output_shape.append(input_shape[i])
    if left:
        input_map = {d: (i + elided) - len(input_shape) for i, d in enumerate(input_spec)}
        output_map = {d: i + elided for i, d in enumerate(output_spec)}
    else:
        input_map = {d: i for i, d in enumerate(input_spec)}
        output_map = {d: i for i, d in enumerate(output_spec)}
    for d in input_spec:
        if d in output_map:
            n_in, n_out = input_shape[input_map[d]], output_shape[output_map[d]]
            if n_out is not None and n_out != n_in:
                raise ValueError(f"Input shape and output shape do not match at shared dimension '{d}'. Input shape "
                                 f"is {n_in}, and output shape is {n_out}.")
    for d in output_spec:
        if d not in input_spec and d not in weight_spec:
            raise ValueError(f"Dimension '{d}' was specified in the output '{output_spec}' but has no corresponding "
                             f"dim in the input spec '{input_spec}' or weight spec '{output_spec}'")
    kernel_shape, input_axes, output_axes = [], [], []
    for i, d in enumerate(weight_spec):
        if d in output_map:
            kernel_shape.append(output_shape[output_map[d]])
            output_axes.append(i)
        elif d in input_map:
            kernel_shape.append(input_shape[input_map[d]])
            input_axes.append(i)
        else:
            raise ValueError(f"Weight dimension '{d}' did not have a match in either the input spec '{input_spec}' "
                             f"or the output spec '{output_spec}'. For this layer, the weight must be fully specified.")
    bias_shape = None
    if bias_axes is not None:
        sizes = {d: output_shape[i + (elided if left else 0)] for i, d in enumerate(output_spec)}
        for d in bias_axes:
            if d not in output_spec:
                raise ValueError(f"Bias dimension '{d}' was requested, but is not part of the output spec "
                                 f"'{output_spec}'")
        first = min(output_spec.find(d) for d in bias_axes)
        bias_shape = [sizes[d] if d in bias_axes else 1 for d in output_spec[first:]]
        if not left:
            bias_shape += [1] * max(elided, 0)
    return kernel_shape, bias_shape, output_shape, input_axes, output_axes

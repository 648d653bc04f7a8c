"""Lambda: a function of tensors as a layer."""
import inspect

from minikeras.layers.base import Layer


class Lambda(Layer):
    """Wraps a function of tensors as a layer: ``Lambda(lambda x: x ** 2)``.

    Args:
      function: called as ``function(inputs, **arguments)`` (and with ``mask=``/``training=`` when
        it takes them).
      output_shape: for ``compute_output_shape`` (a tuple without the batch axis, or a function
        of the input shape); None infers it by evaluating the function abstractly.
      arguments: keyword arguments passed to ``function``.
    """

    takes_strings = True  # a function may compute on string Tensors (mk.strings)

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda: `function` must be callable, received {function!r}")
        self.function = function
        self._output_shape_arg = output_shape
        self.mask = mask
        self.arguments = dict(arguments or {})
        try:
            params = inspect.signature(function).parameters
        except (TypeError, ValueError):
            params = {}
        self._fn_takes = {name for name in ("mask", "training") if name in params}
        self.built = True

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if "mask" in self._fn_takes:
            kwargs["mask"] = mask
        if "training" in self._fn_takes:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_output_shape(self, input_shape):
        shape = self._output_shape_arg
        if shape is None:
            return super().compute_output_shape(input_shape)
        if callable(shape):
            return tuple(shape(input_shape))
        return (input_shape[0],) + tuple(shape)

    def get_config(self):
        raise NotImplementedError("Lambda layers wrap Python code: their config cannot be saved")

"""Lambda: a function of tensors as a layer."""
import base64
import inspect
import marshal

import numpy as np

from minikeras.layers.base import Layer
from minikeras.ops.creation import constant
from minikeras.saving import keras_config
from minikeras.saving.registry import deserialize_keras_object, serialize_keras_object
from minikeras.saving.safe_mode import in_safe_mode


class Lambda(Layer):
    """Wraps a function of tensors as a layer: ``Lambda(lambda x: x ** 2)``.

    Args:
      function: called as ``function(inputs, **arguments)`` (and with ``mask=``/``training=`` when
        it takes them).
      output_shape: for ``compute_output_shape`` (a tuple without the batch axis, or a function
        of the input shape); None infers it by evaluating the function abstractly.
      mask: None (the layer makes no mask), a tensor (the output's mask, whatever the input), or
        a function ``mask(inputs, previous_mask)`` (Keras 3's ``compute_mask`` signature).
      arguments: keyword arguments passed to ``function``.

    Its config is Keras 3's: a named function is saved by name (pass it in ``custom_objects`` or
    register it to load), a Python lambda as its bytecode, which ``from_config`` rebuilds only
    outside safe mode (``safe_mode=False`` or ``keras.config.enable_unsafe_deserialization()``).
    """

    takes_strings = True  # a function may compute on string Tensors (mk.strings)

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda: `function` must be callable, received {function!r}")
        self.function = function
        self._output_shape_arg = output_shape
        self.mask = mask
        self.supports_masking = mask is not None
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

    def compute_mask(self, inputs, mask=None):
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def compute_output_shape(self, input_shape):
        shape = self._output_shape_arg
        if shape is None:
            return super().compute_output_shape(input_shape)
        if callable(shape):
            return tuple(shape(input_shape))
        return (input_shape[0],) + tuple(shape)

    def get_config(self):
        config = {**super().get_config(), "function": _function_config(self.function)}
        shape = self._output_shape_arg
        if shape is not None:
            config["output_shape"] = _function_config(shape) if callable(shape) else shape
        if self.mask is not None:
            config["mask"] = _function_config(self.mask) if callable(self.mask) else _tensor_config(self.mask)
        config["arguments"] = serialize_keras_object(self.arguments)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """The layer ``get_config`` described; a lambda's bytecode is refused in safe mode (the
        default, unless ``keras.config.enable_unsafe_deserialization()`` was called)."""
        config = dict(config)
        safe = in_safe_mode(True if safe_mode is None else safe_mode)
        for key in ("function", "output_shape", "mask"):
            if key in config:
                config[key] = _from_config_value(config[key], custom_objects, safe, key)
        if isinstance(config.get("output_shape"), list):
            config["output_shape"] = tuple(config["output_shape"])
        if "arguments" in config:
            config["arguments"] = deserialize_keras_object(config["arguments"], custom_objects)
        return cls(**config)


def _function_config(fn):
    if getattr(fn, "__name__", None) == "<lambda>":
        closure = [cell.cell_contents for cell in fn.__closure__] if fn.__closure__ else None
        return {"class_name": "__lambda__", "config": {
            "code": base64.encodebytes(marshal.dumps(fn.__code__)).decode("ascii"),
            "defaults": fn.__defaults__, "closure": closure}}
    return serialize_keras_object(fn)


def _tensor_config(value):
    array = np.asarray(value)
    return {"class_name": "__tensor__", "config": {"value": array.tolist(), "dtype": array.dtype.name}}


def _from_config_value(value, custom_objects, safe, key):
    if not isinstance(value, dict):
        return value
    if value.get("class_name") == "__lambda__":
        if value["config"].get("closure"):
            raise ValueError(f"Lambda.from_config: the {key} lambda's bytecode has a closure, which minikeras "
                             "cannot rebuild; register a named function instead")
        return keras_config.from_keras(value, custom_objects, safe_mode=safe, where=f"Lambda's {key}")
    if value.get("class_name") == "__tensor__":
        return constant(value["config"]["value"], dtype=value["config"]["dtype"])
    return deserialize_keras_object(value, custom_objects)

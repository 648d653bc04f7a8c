"""Keras 3's saving hooks of a Layer, with Keras's defaults, for a subclass to override or call
with ``super()``:

- ``save_own_variables(store)`` / ``load_own_variables(store)``: the layer's own variables
  (trainable, then non-trainable, each in creation order) under the keys ``"0"``, ``"1"``, ...
  of its group in a weights file;
- ``get_build_config()`` / ``build_from_config(config)``: ``{"input_shape": shape}``, the shape
  the layer was built for, and ``build(config["input_shape"])``.

Saving (``minikeras.saving``) calls a layer's own versions where its class overrides them (a
``.keras`` file then carries its ``build_config``, as Keras's does); for the defaults it does
the same work itself, with its checks and messages (``module.keras_default`` marks them).
"""
import numpy as np

from minikeras.module import keras_default, own_variables


class SavingHooks:
    """Mixed into ``Layer``: the defaults of Keras's four saving hooks (see the module docstring)."""

    @keras_default
    def save_own_variables(self, store):
        """Puts the layer's own variables into ``store`` as ``store["0"], store["1"], ...``
        (NumPy arrays; trainable ones first, as Keras)."""
        for i, variable in enumerate(own_variables(self)):
            store[str(i)] = np.asarray(variable.numpy())

    @keras_default
    def load_own_variables(self, store):
        """Assigns ``store["0"], store["1"], ...`` to the layer's own variables, in
        ``save_own_variables``'s order.

        Raises:
          ValueError: as Keras, when ``store`` holds another number of entries than the layer
            has variables (an unbuilt layer without variables says how to build it), or an
            array's shape is not its variable's.
        """
        variables = own_variables(self)
        if len(store.keys()) != len(variables):
            if not variables and not self.built:
                raise ValueError(
                    f"Layer '{self.name}' was never built and thus it doesn't have any variables. However the "
                    f"weights file lists {len(store.keys())} variables for this layer. Build it in its parent's "
                    "build(), or implement build_from_config(config) (and get_build_config()) on it")
            raise ValueError(f"Layer '{self.name}' expected {len(variables)} variables, but received "
                             f"{len(store.keys())} variables during loading. Expected: {[v.name for v in variables]}")
        for i, variable in enumerate(variables):
            value = np.asarray(store[str(i)])
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(f"Layer '{self.name}': variable '{variable.path}' has shape {tuple(variable.shape)}, "
                                 f"but the weights file's entry '{i}' has shape {tuple(value.shape)}")
            variable.assign(value)

    @keras_default
    def get_build_config(self):
        """``{"input_shape": shape}``: the shape the layer was built for (by its first call, or by
        ``Layer.build``); None before that."""
        shape = vars(self).get("_built_for_shape")
        return None if shape is None else {"input_shape": shape}

    @keras_default
    def build_from_config(self, config):
        """Builds the layer from ``get_build_config()``'s result: ``build(config["input_shape"])``."""
        if config and "input_shape" in config:
            self.build(config["input_shape"])
        self.built = True

    def _record_build_shape(self, shape):
        if vars(self).get("_built_for_shape") is None:
            self._built_for_shape = shape

"""StackedRNNCells: several cells as one, each step feeding the next cell's input."""
from minikeras.layers.base import Layer
from minikeras.ops.creation import zeros
from minikeras.saving.registry import deserialize_keras_object, register_builtin, serialize_keras_object


def _as_list(states):
    return list(states) if isinstance(states, (list, tuple)) else [states]


@register_builtin("minikeras.layers")
class StackedRNNCells(Layer):
    """Cells applied one after another at every step; the states are one list per cell.

    >>> cells = mk.layers.StackedRNNCells([mk.layers.LSTMCell(8), mk.layers.GRUCell(4)])
    >>> mk.layers.RNN(cells)(mk.ones((2, 5, 3))).shape
    (2, 4)
    """

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError(f"All cells must have a `call` method. Received cell without a `call` method: {cell}")
            if "state_size" not in dir(cell):
                raise ValueError(f"All cells must have a `state_size` attribute. Received cell without a "
                                 f"`state_size`: {cell}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        cell = self.cells[-1]
        size = getattr(cell, "output_size", None)
        return size if size is not None else _as_list(cell.state_size)[0]

    def get_initial_state(self, batch_size=None):
        states = []
        for cell in self.cells:
            get = getattr(cell, "get_initial_state", None)
            if get is not None:
                states.append(_as_list(get(batch_size=batch_size)))
            else:  # a cell without get_initial_state starts from zeros, as in Keras 3
                states.append([zeros((batch_size, n), dtype=self.compute_dtype) for n in _as_list(cell.state_size)])
        return states

    def build(self, input_shape):
        shape = tuple(input_shape)
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(shape)
                cell.built = True
            size = getattr(cell, "output_size", None)
            shape = shape[:-1] + (size if size is not None else _as_list(cell.state_size)[0],)
        self.built = True

    def call(self, inputs, states, training=None):
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            inputs, cell_states = cell(inputs, _as_list(cell_states), training=training)
            new_states.append(_as_list(cell_states))
        return inputs, new_states

    def get_config(self):
        return {**super().get_config(), "cells": [serialize_keras_object(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cells = [deserialize_keras_object(c, custom_objects=custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)

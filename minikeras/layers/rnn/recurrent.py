"""SimpleRNN, LSTM and GRU: ``RNN`` around the matching cell, configured as in Keras 3 (the
cell's arguments are the layer's, and its config is flat: no nested ``cell``)."""
import inspect

from minikeras.layers.rnn.rnn import RNN
from minikeras.layers.rnn.rnn_cells import DropoutCell, GRUCell, LSTMCell, SimpleRNNCell
from minikeras.saving.registry import register_builtin

_RNN_ARGUMENTS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll")
_BASE = ("name", "trainable", "dtype", "input_shape", "batch_input_shape", "input_dim", "activity_regularizer",
         "zero_output_for_mask")


def _cell_arguments(cell_class):
    """The keyword arguments of ``cell_class`` (and of the DropoutCell settings it passes on)."""
    names = set()
    for klass in (cell_class, DropoutCell):
        names.update(p.name for p in inspect.signature(klass.__init__).parameters.values()
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return frozenset(names - {"self"}) | {"use_cudnn", "implementation"}


class _CellLayer(RNN):
    input_ndim = 3
    cell_class = None
    cell_name = None

    def __init__(self, units, **kwargs):
        rnn_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in _RNN_ARGUMENTS + _BASE}
        use_cudnn = kwargs.pop("use_cudnn", "auto")
        if use_cudnn not in ("auto", True, False):
            raise ValueError("Invalid valid received for argument `use_cudnn`. Expected one of {'auto', True, "
                             f"False}}. Received: use_cudnn={use_cudnn}")
        cell = self.cell_class(units, name=self.cell_name, dtype=rnn_kwargs.get("dtype"),
                               trainable=rnn_kwargs.get("trainable", True), **kwargs)
        super().__init__(cell, **rnn_kwargs)
        self.use_cudnn = use_cudnn

    def __getattr__(self, name):
        # the cell's settings read through the layer (layer.units, layer.activation, ...), as Keras
        cell = vars(self).get("cell")
        if cell is not None and not name.startswith("_") and name in vars(cell):
            return vars(cell)[name]
        return super().__getattr__(name)

    def get_config(self):
        config = super().get_config()
        del config["cell"]
        cell = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell.pop(key, None)
        return {**config, **cell}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


@register_builtin("minikeras.layers")
class SimpleRNN(_CellLayer):
    """A fully connected RNN, ``h_t = activation(x_t W + h_{t-1} U + b)``, over (batch, time,
    features); the arguments of ``SimpleRNNCell`` and of ``RNN``.

    >>> mk.layers.SimpleRNN(4)(mk.ones((2, 5, 3))).shape
    (2, 4)
    """

    cell_class, cell_name = SimpleRNNCell, "simple_rnn_cell"
    FROM_CONFIG_KEYS = _cell_arguments(SimpleRNNCell)  # the cell's, which ``**kwargs`` takes (for .keras files)


@register_builtin("minikeras.layers")
class LSTM(_CellLayer):
    """Long short-term memory over (batch, time, features), Keras 3's weights and gate order
    (i, f, c, o); the arguments of ``LSTMCell`` and of ``RNN``. One ``lax.scan`` per call.

    >>> out, h, c = mk.layers.LSTM(4, return_sequences=True, return_state=True)(mk.ones((2, 5, 3)))
    >>> out.shape, h.shape, c.shape
    ((2, 5, 4), (2, 4), (2, 4))
    """

    cell_class, cell_name = LSTMCell, "lstm_cell"
    FROM_CONFIG_KEYS = _cell_arguments(LSTMCell)  # the cell's, which ``**kwargs`` takes (for .keras files)

    def get_config(self):
        return {**super().get_config(), "use_cudnn": self.use_cudnn}


@register_builtin("minikeras.layers")
class GRU(_CellLayer):
    """Gated recurrent unit over (batch, time, features), Keras 3's weights and gate order
    (z, r, h), ``reset_after`` either way; the arguments of ``GRUCell`` and of ``RNN``.

    >>> mk.layers.GRU(4, reset_after=False)(mk.ones((2, 5, 3))).shape
    (2, 4)
    """

    cell_class, cell_name = GRUCell, "gru_cell"
    FROM_CONFIG_KEYS = _cell_arguments(GRUCell)  # the cell's, which ``**kwargs`` takes (for .keras files)

    def get_config(self):
        return {**super().get_config(), "use_cudnn": self.use_cudnn}

"""Model: a Layer with sub-layers, a summary, weights files and (see training.py) fit."""
import jax

from minikeras.layers.base import Layer
from minikeras.models.summary import format_summary
from minikeras.models.training import Trainer
from minikeras.tensor import Tensor


class Model(Trainer, Layer):
    """The base class of models: subclass it, create layers in ``__init__`` and compute in
    ``call(inputs, training=None)``. ``compile``/``fit``/``evaluate``/``predict`` come from
    the Trainer.

    >>> class MLP(mk.Model):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = mk.layers.Dense(128, activation="relu")
    ...         self.out = mk.layers.Dense(10)
    ...     def call(self, x, training=None):
    ...         return self.out(self.hidden(x))
    """

    # Training state (optimizer, loss tracker, metrics) is not part of the model's variables.
    _NOT_TRACKED = frozenset({"_inbound", "optimizer", "loss", "_trainer_steps", "_trainer_metrics",
                              "_trainer_loss_tracker", "_trainer_metric_specs", "history"})

    def __init__(self, *args, **kwargs):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise TypeError("mk.Model(inputs, outputs) (the functional API) is not supported; subclass mk.Model "
                            "and define call(), or use mk.Sequential")
        Layer.__init__(self, **kwargs)
        Trainer.__init__(self)

    @property
    def layers(self):
        """The layers assigned to this model's attributes (directly, or in lists/dicts), in order."""
        found, seen = [], set()

        def visit(value):
            if isinstance(value, Layer):
                if id(value) not in seen:
                    seen.add(id(value))
                    found.append(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    visit(item)
            elif isinstance(value, dict):
                for item in value.values():
                    visit(item)

        for key, value in vars(self).items():
            if key not in self._NOT_TRACKED and not key.startswith("_trainer"):
                visit(value)
        return found

    def build(self, input_shape=None):
        """Builds every layer by evaluating the model abstractly on ``input_shape``."""
        if input_shape is None:
            raise ValueError(f"Model '{self.name}': build needs an input_shape such as (None, 784)")
        self._trace_shapes(input_shape)
        self.built = True

    def _trace_shapes(self, input_shape):
        batch_shape = tuple(1 if n is None else n for n in input_shape)
        spec = jax.ShapeDtypeStruct(batch_shape, self.dtype)
        self.built = True  # the call below must not re-enter build
        jax.eval_shape(lambda x: _leaves(self.call(Tensor(x), training=False)), spec)

    def summary(self, print_fn=None):
        """Prints Keras's table: layer (type), output shape, parameter count, and totals."""
        (print_fn or print)(format_summary(self))

    def get_layer(self, name=None, index=None):
        """A layer by name or index."""
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[l.name for l in self.layers]}")

    def save_weights(self, filepath, overwrite=True):
        """Writes all weights (and the optimizer's state) to an HDF5 ``.weights.h5`` file, atomically."""
        from minikeras import saving
        saving.save_weights(self, filepath, overwrite=overwrite)

    def save(self, filepath, overwrite=True):
        """Writes the model (Sequential: its layer configs and weights) to a ``.keras`` file."""
        from minikeras import saving
        saving.save_model(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False):
        """Loads weights written by ``save_weights`` (or by Keras 3 / legacy Keras 2 HDF5)."""
        from minikeras import saving
        saving.load_weights(self, filepath, skip_mismatch=skip_mismatch)


def _leaves(out):
    return jax.tree_util.tree_map(lambda t: t._value, out, is_leaf=lambda x: isinstance(x, Tensor))

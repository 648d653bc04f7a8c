"""Model: a Layer with sub-layers, a summary, weights files and (see training.py) fit."""
import warnings

import jax

from minikeras import saving
from minikeras.layers.base import Layer, stateful_eval_shape
from minikeras.models.functional import FunctionalGraph
from minikeras.models.functional_config import functional_config, functional_from_config
from minikeras.models.summary import format_summary
from minikeras.module import keras_default, tracked_items
from minikeras.saving.registry import register_builtin
from minikeras.tensor import Tensor
from minikeras.trainers.input_cast import cast_integer_inputs
from minikeras.trainers.trainer import Trainer


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

    # Training state (optimizer, loss, metrics, compiled steps) is not part of the model's
    # variables, layers or weights file.
    # ``host_split()``'s cached parts hold the model's own layers: not state of their own.
    _NOT_TRACKED = Layer._NOT_TRACKED | Trainer.TRAINING_STATE | {"_host_split_cache"}
    # Read by mk.saving, which asks the model rather than importing models: a model's weights
    # file holds its ``layers`` under ``layers/<class>[_n]``; Keras 3 itself files a subclassed
    # model's layers under their attribute names (read with ``keras_subclass_paths``).
    saves_layers = True
    keras_files_layers_by_attribute = True

    def __new__(cls, *args, **kwargs):
        if cls is Model and _functional_arguments(args, kwargs):
            cls = Functional  # mk.Model(inputs, outputs): the functional API, as Keras 3
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        # As Keras 3, the arguments given to Model.__init__ decide: a subclass that passes
        # inputs and outputs (``CustomModel(inputs, outputs)``, or ``super().__init__(inputs=...,
        # outputs=...)`` in its own __init__) becomes functional; any other is subclassed.
        if _functional_arguments(args, kwargs) and not isinstance(self, Functional) and _defines_no_call(type(self)):
            self.__class__ = _functional_subclass(type(self))
            Functional.__init__(self, *args, **kwargs)
            return
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise TypeError(f"{type(self).__name__}: a subclass of mk.Model defines call() and takes no "
                            "inputs/outputs; for the functional API call mk.Model(inputs, outputs) itself")
        Layer.__init__(self, **kwargs)
        Trainer.__init__(self)

    @property
    def layers(self):
        """The layers assigned to this model's attributes (directly, or in lists/dicts), in order."""
        found = {}
        for _, _, item in tracked_items(self):
            if isinstance(item, Layer):
                found.setdefault(id(item), item)
        return list(found.values())

    def build(self, input_shape=None):
        """Builds every layer by evaluating the model abstractly on ``input_shape``."""
        if input_shape is None:
            raise ValueError(f"Model '{self.name}': build needs an input_shape such as (None, 784)")
        self._trace_shapes(input_shape)
        self._build_input_shape = tuple(input_shape)
        self.built = True

    def _build_from(self, inputs):
        """The first call's build. Keras 3 builds a subclassed model by running ``call`` on the
        real inputs, where each layer builds itself; a ``build`` of the subclass's own runs first."""
        if type(self).build is not Model.build:
            return Layer._build_from(self, inputs)
        self._build_input_shape = jax.tree_util.tree_map(lambda t: tuple(t.shape), inputs,
                                                         is_leaf=lambda x: isinstance(x, Tensor))
        self.built = True

    @keras_default
    def get_build_config(self):
        """What ``build_from_config`` needs to build a model like this one: ``{"input_shape": ...}``
        (None before ``build``). ``load_model`` uses it to build the model it rebuilds."""
        shape = getattr(self, "_build_input_shape", None)
        return None if shape is None else {"input_shape": shape}

    @keras_default
    def build_from_config(self, config):
        """Builds the model from ``get_build_config()``'s result."""
        self.build(tuple(config["input_shape"]))

    @keras_default
    def get_compile_config(self):
        """Keras 3's ``compile_config``: the arguments ``compile`` was given (optimizer, loss,
        metrics, ...), serialized as a ``.keras`` file keeps them; None before ``compile``.
        Override it together with ``compile_from_config`` to save other compile arguments."""
        return saving.model_file.compile_config(self)

    @keras_default
    def compile_from_config(self, config):
        """Compiles the model as ``get_compile_config()``'s result says (``load_model`` calls it).

        A model whose class overrides ``compile`` is not compiled, with Keras's warning: such a
        class should override ``get_compile_config`` and ``compile_from_config`` as well."""
        if type(self).compile is not Trainer.compile:
            warnings.warn("`compile()` was not called as part of model loading because the model's `compile()` "
                          "method is custom. All subclassed Models that have `compile()` overridden should also "
                          "override `get_compile_config()` and `compile_from_config(config)`. Alternatively, you "
                          "can call `compile()` manually after loading.", stacklevel=2)
            return
        saving.model_file.compile_from_config(self, config, None)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The model rebuilt from ``get_config()``: ``cls(**config)`` (override both for other arguments).
        ``mk.Model.from_config`` of a functional model's config rebuilds the functional model, as Keras."""
        if cls is Model and {"layers", "input_layers", "output_layers"} <= set(config):
            return Functional.from_config(config, custom_objects=custom_objects)
        return cls(**config)

    def _trace_shapes(self, input_shape):
        def spec(shape):  # a shape, or a list/tuple/dict of shapes (a model of several inputs)
            if isinstance(shape, dict):
                return {k: spec(v) for k, v in shape.items()}
            if isinstance(shape, (list, tuple)) and shape and not all(n is None or isinstance(n, int) for n in shape):
                return type(shape)(spec(s) for s in shape)
            return jax.ShapeDtypeStruct(tuple(1 if n is None else n for n in shape), self.dtype)
        self.built = True  # the call below must not re-enter build
        kwargs = {"training": False} if self._call_takes_training else {}  # as Keras: only if call takes it
        # Traced as mk.function traces, so that a static size (mk.shape(x)[1]) is a number there too.
        leaves, treedef = jax.tree_util.tree_flatten(spec(input_shape))
        stateful_eval_shape(lambda x: _leaves(self.call(treedef.unflatten(x), **kwargs)), leaves)  # x: Tensors

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
        saving.save_weights(self, filepath, overwrite=overwrite)

    def save(self, filepath, overwrite=True):
        """Writes the model (its class, ``get_config()``, weights and compile settings) to a ``.keras`` file.

        Sequential models and classes registered with ``mk.saving.register_keras_serializable``
        can be saved so; ``mk.saving.load_model`` rebuilds them."""
        saving.save_model(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False):
        """Loads weights written by ``save_weights`` (or by Keras 3 / legacy Keras 2 HDF5)."""
        saving.load_weights(self, filepath, skip_mismatch=skip_mismatch)

    def to_json(self, **kwargs):
        """The model's architecture (and build and compile settings) as a JSON string, as Keras 3's;
        ``keras.models.model_from_json`` rebuilds it. ``kwargs`` go to ``json.dumps``."""
        return saving.model_file.model_to_json(self, **kwargs)


def _functional_arguments(args, kwargs):
    """Whether ``Model.__init__``'s arguments are the functional API's ``inputs, outputs``
    (positionally or by keyword), as Keras 3's ``functional_init_arguments``."""
    return (len(args) == 2 or (len(args) == 1 and "outputs" in kwargs)
            or ("inputs" in kwargs and "outputs" in kwargs))


def _defines_no_call(cls):
    """Whether no class between ``cls`` and ``Model`` defines ``call``."""
    return all("call" not in vars(klass) for klass in cls.__mro__[:cls.__mro__.index(Model)])


_FUNCTIONAL_SUBCLASSES = {}


def _functional_subclass(cls):
    """``cls`` (a subclass of Model that overrides e.g. ``train_step`` but not ``call``) on top of
    ``Functional``, for ``cls(inputs, outputs)``: Keras 3 lets the "customizing what happens in
    fit" guide build its ``CustomModel`` so. ``cls``'s own methods come first, then Functional's."""
    found = _FUNCTIONAL_SUBCLASSES.get(cls)
    if found is None:
        found = type(cls.__name__, (cls, Functional), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
        _FUNCTIONAL_SUBCLASSES[cls] = found
    return found


@register_builtin("minikeras.models")
class Functional(FunctionalGraph, Model):
    """A model made with ``mk.Model(inputs, outputs)`` (see ``FunctionalGraph``)."""

    _NOT_TRACKED = Model._NOT_TRACKED | FunctionalGraph.GRAPH_STATE
    keras_files_layers_by_attribute = False  # Keras 3 files a functional model's layers under layers/
    FROM_CONFIG_KEYS = ("layers", "input_layers", "output_layers")  # the graph, read by from_config

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        Layer.__init__(self, name=name, trainable=trainable, **kwargs)
        Trainer.__init__(self)
        self._init_graph(inputs, outputs)

    def get_config(self):
        return functional_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        inputs, outputs, name = functional_from_config(config, custom_objects)
        return cls(inputs, outputs, name=name, trainable=config.get("trainable", True))

    def get_build_config(self):
        return None  # built from its config

    def check_raw_inputs(self, x):
        """Strings given to a numeric Input raise ``StringInputError`` before any step runs."""
        self._refuse_strings(x)

    def host_split(self, raw_shape=None):
        """``(host_fn, device_model)``: the host layers that read the Inputs (and the leading
        host layers of a Sequential called on them) as a function of the raw inputs on the host
        (NumPy out: one array, or a tuple in the order the rest reads them), and a model of the
        rest of the graph for the compiled steps; made once. ``(None, self)`` without host
        layers. ``raw_shape`` is not needed (a functional model is built when made)."""
        if not self.has_host_layers:
            return None, self
        cached = vars(self).get("_host_split_cache")
        if cached is None:
            device = DevicePart(f"{self.name}_device_part", self.compiled_part_layers(),
                                lambda x, training: self.run_compiled_part(x), dtype=self.dtype_policy,
                                output_names=self.output_names)
            cached = self._host_split_cache = (lambda x: self.apply_host_layers(cast_integer_inputs(self, x)), device)
        return cached


def _leaves(out):
    return jax.tree_util.tree_map(lambda t: t._value, out, is_leaf=lambda x: isinstance(x, Tensor))


class DevicePart(Model):
    """The part of a model that runs in its compiled steps: the layers after the host ones.

    Args:
      name: the part's name (``<model>_device_part``).
      layers: the layers it holds (shared with the model it was cut from), in the model's order.
      run: ``run(inputs, training)`` computes the part's outputs from what ``host_fn`` made.
      dtype: the dtype policy of the model it was cut from.
      output_names: the model's ``output_names`` (per-output losses and metrics go by them).
      input_shape, input_dtype: what ``host_fn`` makes, where it makes one array (a Sequential's
        cut): the part of a Sequential called inside a functional model starts from it.
    """

    def __init__(self, name, layers, run, dtype=None, output_names=None, input_shape=None, input_dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.part_layers = list(layers)
        self._run_part = run
        self.output_names = output_names
        self.part_input_shape, self.part_input_dtype = input_shape, input_dtype
        self.built = True

    def call(self, inputs, training=None):
        return self._run_part(inputs, training)

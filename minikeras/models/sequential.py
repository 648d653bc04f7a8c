"""Sequential: a plain stack of layers, each feeding the next."""
import numpy as np

from minikeras import dtype_policies
from minikeras.layers.base import Layer
from minikeras.layers.core.input_layer import InputLayer
from minikeras.layers.mask_flow import get_mask, set_mask
from minikeras.models.functional import adjust_input_rank
from minikeras.models.host_split import as_host_values, leading_host_layers, run_layers
from minikeras.models.model import DevicePart, Functional, Model
from minikeras.ops.math import cast
from minikeras.saving.registry import deserialize_keras_object, register_builtin, serialize_keras_object
from minikeras.symbolic import KerasTensor, Node, is_symbolic
from minikeras.tensor import Tensor, to_array
from minikeras.trainers.input_cast import cast_integer_inputs


@register_builtin("minikeras.models")
class Sequential(Model):
    """A linear stack of layers.

    Built at construction when the first layer knows its input (``input_shape=`` or
    ``mk.Input``), otherwise on first call.

    >>> model = mk.Sequential([mk.layers.Dense(64, activation="relu", input_shape=(784,)),
    ...                        mk.layers.Dense(10)])
    """

    FROM_CONFIG_KEYS = ("build_input_shape",)  # read by from_config besides the constructor's arguments

    # The Input placeholder holds no state, and Keras 3 files no group for it.
    _NOT_TRACKED = Model._NOT_TRACKED | {"_input_layer", "_functional"}
    keras_files_layers_by_attribute = False  # Keras 3 files a Sequential's layers under layers/ too

    def __init__(self, layers=None, name=None, trainable=True, dtype=None):
        super().__init__(name=name, trainable=trainable, dtype=dtype)
        self._layers = []
        self._input_layer = None
        self._functional = None
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_build()

    @property
    def layers(self):
        return list(self._layers)

    def add(self, layer, rebuild=True):
        """Appends ``layer`` (an ``mk.Input`` may come first)."""
        if is_symbolic(layer) and isinstance(layer.node.operation, InputLayer):
            layer = layer.node.operation  # mk.Input(...)'s tensor stands for its InputLayer
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential.add expects a Layer, received {type(layer).__name__}: {layer!r}")
        if isinstance(layer, InputLayer):
            if self._layers or self._input_layer is not None:
                raise ValueError("Sequential: an Input must be the first layer")
            self._input_layer = layer
        else:
            self._layers.append(layer)
        self.built = False
        self._functional = None
        self._host_split_cache = None
        self._trainer_steps = {}  # compiled steps of the old stack would miss the new layer
        if rebuild:
            self._maybe_build()

    def pop(self):
        """Removes the last layer."""
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        self._layers.pop()
        self.built = False
        self._functional = None
        self._host_split_cache = None
        self._trainer_steps = {}

    def _maybe_build(self):
        source = self._input_layer or (self._layers[0] if self._layers else None)
        shape = getattr(source, "_batch_input_shape", None)
        if shape is not None and self._layers:
            self.build(shape)

    def build(self, input_shape=None):
        with self.open_name_scope():  # as Keras 3: the layers' weights are 'sequential/dense/kernel'
            self._build_in_own_scope(input_shape)

    def _build_in_own_scope(self, input_shape):
        if input_shape is None:
            source = self._input_layer or (self._layers[0] if self._layers else None)
            input_shape = getattr(source, "_batch_input_shape", None)
        if input_shape is None:
            raise ValueError(f"Sequential '{self.name}' cannot be built without an input shape: pass input_shape= "
                             "to the first layer, start with mk.Input(shape), or call the model on data")
        self._batch_input_shape = tuple(input_shape)
        self._host_split_cache = None
        prefix = leading_host_layers(self._layers)
        if prefix:  # strings: the host layers give their output shapes, the rest is traced from there
            shape = tuple(input_shape)
            for layer in self._layers[:prefix]:
                shape = tuple(layer.compute_output_shape(shape))
                layer.built = True
            if prefix < len(self._layers):
                self._split_parts(prefix)[1]._trace_shapes(shape)
        elif None not in tuple(input_shape)[1:]:
            self._trace_shapes(input_shape)
        # With a free size past the batch (audio of any length) the layers are built by the
        # symbolic graph below, as Keras does: a stand-in size of 1 would be too short for them.
        self._functional = self._graph(input_shape)
        self.built = True

    def _graph(self, input_shape):
        """The functional model underneath (Keras 3): the layers called in turn on the Input."""
        if not self._layers:
            return None
        source = self._input_layer
        if source is None or tuple(source.batch_shape) != tuple(input_shape):
            source = InputLayer(batch_shape=tuple(input_shape), dtype=self._layers[0].dtype,
                                name=f"{self.name}_input")
        x = source.output
        for layer in self._layers:
            x = layer(x)
        return Functional(source.output, x, name=f"{self.name}_functional")

    def _connected(self, what):
        if self._functional is None:
            raise AttributeError(f"Sequential model '{self.name}' has no {what} yet: it is built on its first call "
                                 "(or start it with mk.Input(shape))")
        return self._functional

    @property
    def inputs(self):
        return self._connected("inputs").inputs

    @property
    def outputs(self):
        return self._connected("outputs").outputs

    @property
    def input(self):
        return self._connected("input").input

    @property
    def output(self):
        return self._connected("output").output

    @property
    def input_shape(self):
        return self._connected("input_shape").input_shape

    @property
    def output_shape(self):
        return self._connected("output_shape").output_shape

    def _build_from(self, inputs):
        self.build((None,) + tuple(inputs.shape[1:]))

    def _symbolic_call(self, inputs, args, training, kwargs):
        """A call on KerasTensors (a functional model's): one that starts with host layers is
        described by its own graph instead of an abstract evaluation (strings cannot be traced);
        the functional model cuts it after those layers (``models.functional_host``)."""
        if not leading_host_layers(self._layers) or args or kwargs or not isinstance(inputs, KerasTensor):
            return super()._symbolic_call(inputs, args, training, kwargs)
        if not self.built:
            self._build_from(inputs)
        made = self._functional.outputs[0]
        outputs = KerasTensor((inputs.shape[0],) + tuple(made.shape[1:]), made.dtype)
        nodes = self._inbound_nodes()
        node_kwargs = {} if training is None else {"training": training}
        nodes.append(Node(self, (inputs,), node_kwargs, outputs, index=len(nodes)))
        return outputs

    # -- leading host layers (string preprocessing) ------------------------------------------
    def host_split(self, raw_shape=None):
        """``(host_fn, device_model)``: the leading host layers as a function of the raw inputs
        on the host (NumPy out), and a model of the other layers for the compiled steps; made
        once and kept until a layer is added or removed. ``(None, self)`` without host layers.
        ``raw_shape``: a function giving the raw inputs' shape, to build an unbuilt model first."""
        prefix = leading_host_layers(self._layers)
        if not prefix:
            return None, self
        if not self.built:  # built for the raw inputs (strings), not for what the host layers make
            if raw_shape is None:
                raise ValueError(f"Sequential '{self.name}' starts with layers that run on the host and is not built: "
                                 "call it on data, or build(input_shape), before asking for its host split")
            self.build((None,) + tuple(raw_shape())[1:])
        return self._split_parts(prefix)

    def _split_parts(self, prefix):
        """The cached ``(host_fn, device_model)`` of the first ``prefix`` layers' cut."""
        cached = vars(self).get("_host_split_cache")
        if cached is None:
            host_layers, device_layers = self._layers[:prefix], self._layers[prefix:]
            shape = tuple(self._batch_input_shape)
            for layer in host_layers:
                shape = tuple(layer.compute_output_shape(shape))

            def host_fn(x):
                for layer in host_layers:
                    x = layer(x)
                return cast_integer_inputs(self, as_host_values(x))
            device = DevicePart(f"{self.name}_device_part", device_layers,
                                lambda x, training: run_layers(device_layers, x, training), dtype=self.dtype_policy,
                                input_shape=shape, input_dtype=host_layers[-1].output_dtype)
            cached = self._host_split_cache = (host_fn, device)
        return cached

    def call(self, inputs, training=None, mask=None):
        x = inputs
        if mask is not None:  # the mask the input carries, or the one given
            x = x if isinstance(x, Tensor) else Tensor(to_array(x))
            set_mask(x, mask)
        if self._functional is not None:  # as Keras 3's Sequential, through its functional model:
            spec = self._functional.inputs[0]
            x = adjust_input_rank(x, spec)  # a trailing axis of 1 added or dropped
            to_float = np.dtype(spec.dtype).kind == "f" and not leading_host_layers(self._layers[:1])
            if isinstance(x, Tensor) and x.dtype.kind in "biu" and to_float:  # (a host layer takes them as given)
                x, mask = cast(x, spec.dtype), get_mask(x)  # raw uint8 images (a Dataset's too) to the float Input
                set_mask(x, mask)
        if self._input_layer is not None:
            x = self._input_layer(x)
        return run_layers(self._layers, x, training)

    def get_config(self):
        """``name``, the layers (each as ``mk.saving.serialize_keras_object`` gives it) and the input
        shape the model was built for: what ``from_config`` needs to rebuild it."""
        return {"name": self.name, "dtype": dtype_policies.serialize(self.dtype_policy),
                "layers": [serialize_keras_object(layer) for layer in self._layers],
                "build_input_shape": getattr(self, "_batch_input_shape", None)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The Sequential described by ``get_config()``, built when it records an input shape.

        Layer classes are found in mk.saving's registry (minikeras's own, and those registered
        with ``mk.saving.register_keras_serializable``) or in ``custom_objects``.
        """
        model = cls([deserialize_keras_object(spec, custom_objects, what="layer") for spec in config.get("layers", [])],
                    name=config.get("name"), dtype=config.get("dtype"))
        if not model.built and config.get("build_input_shape"):
            model.build(tuple(config["build_input_shape"]))
        return model

    def get_build_config(self):
        return None  # get_config() carries the input shape, as Keras 3's Sequential does

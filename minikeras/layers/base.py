"""Layer: a Module with a lazy ``build``, ``add_weight`` and a checked ``__call__``."""
import inspect

import jax
import numpy as np

from minikeras import _context, autograph, constraints, dtype_policies, initializers, regularizers
from minikeras.backend import is_tracer
from minikeras.dtypes import as_dtype, is_floating, string_refusal
from minikeras.layers import mask_flow
from minikeras.layers.autocast import scope_for
from minikeras.layers.input_spec import assert_input_compatibility
from minikeras.layers.name_scope import name_scope
from minikeras.layers.remat_scope import current_remat_mode, rematerialized
from minikeras.layers.saving_hooks import SavingHooks
from minikeras.metrics.base import Metric
from minikeras.module import Module, snake_case, unique_name
from minikeras.ops.math import cast
from minikeras.programs.trace import trace
from minikeras.random.seed_generator import SeedGenerator
from minikeras.string_tensor import is_string_value, string_tensor
from minikeras.symbolic import KerasTensor, Node, any_symbolic, flatten, output_spec
from minikeras.tensor import Tensor, Variable, to_array

# How many losses the layers' _losses lists hold, all together: a fact about the layer objects
# (shared by every thread), not call-time state, so it stays here, process-wide.
_holding_losses = [0]


# add_weight's positional orders: Keras 3's, and with a name first (TF 2 code, minikeras's layers)
_KERAS_ORDER = ("shape", "initializer", "dtype")
_NAME_FIRST_ORDER = ("name", "shape", "initializer", "trainable", "dtype", "regularizer", "constraint")


def current_training(state=None):
    """The ``training`` flag an enclosing layer call of this thread was given (None if none
    was); ``state``: this thread's ``_context.call_state``, when the caller has it."""
    for flag in reversed((state or _context.call_state).training):
        if flag is not None:
            return flag
    return None


class Layer(SavingHooks, Module):
    """The Keras layer lifecycle: ``build(input_shape)`` on first call, then ``call``.

    Subclasses set ``input_ndim`` or ``min_ndim`` to have ``__call__`` check the input rank (or
    ``self.input_spec``: an ``InputSpec`` or a list of them, checked as Keras 3 checks it, before
    and after ``build``), create weights in ``build`` with ``add_weight``, and compute in
    ``call(inputs, training=None)``.

    Args:
      trainable: whether the layer's weights are updated by training.
      name: unique by default (``dense``, ``dense_1``, ...).
      dtype: a dtype policy (``mk.mixed_precision.Policy``) or its name: 'float32', or
        'mixed_bfloat16' to compute in bfloat16 with float32 weights; a dtype name sets both.
        Default: the global policy. Floating inputs are cast to its compute dtype.
      autocast: whether float weights read inside ``call`` are cast to the compute dtype (and
        floating inputs with them), as Keras 3's ``autocast``.
      input_shape: the shape of one example (no batch axis), for the first layer of a model.
      activity_regularizer: a regularizer (or name) of the layer's output: after each call,
        ``regularizer(output) / batch_size`` is in ``layer.losses``.
    """

    input_ndim = None
    min_ndim = None
    input_spec = None  # an InputSpec (layers/input_spec.py), or a list of them, for the first argument
    takes_strings = False  # True for layers that compute on string Tensors (host preprocessing, Lambda)
    supports_masking = False  # True where a subclass overrides compute_mask (set in __init__)
    _NOT_TRACKED = frozenset({"_inbound", "_losses"})

    def __init__(self, trainable=True, name=None, dtype=None, input_shape=None, batch_input_shape=None,
                 input_dim=None, activity_regularizer=None, autocast=True, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__ got unexpected keyword arguments {sorted(kwargs)}")
        super().__init__(name=unique_name(snake_case(type(self).__name__)) if name is None else name)
        self.dtype_policy = dtype
        self.autocast = bool(autocast)
        self._trainable = bool(trainable)
        self.built = False
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is not None:
            self._batch_input_shape = tuple(batch_input_shape)
        elif input_shape is not None:
            self._batch_input_shape = (None,) + tuple(input_shape)
        else:
            self._batch_input_shape = None
        self._output_shape = None
        signature = inspect.signature(self.call)
        self._call_takes_training = "training" in signature.parameters
        self._call_masks = mask_flow.mask_parameters(signature.parameters)
        if self._call_masks is not None:
            self._call_signature = signature
        self._computes_masks = type(self).compute_mask is not Layer.compute_mask
        if self._computes_masks:
            self.supports_masking = True
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self._losses = []
        self.remat_mode = current_remat_mode()  # keras.RematScope: decided where the layer is made

    def __getattr__(self, name):
        # Only reached for missing attributes: a subclass whose __init__ skipped Layer's.
        if name.startswith("_") or name == "built":
            if "_trainable" not in vars(self):
                raise AttributeError(
                    f"{type(self).__name__} has no attribute {name!r}: its __init__ must call "
                    f"super().__init__(**kwargs) before using the layer")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")

    def _untracked_types(self):
        # A model's metrics (its loss tracker, compiled metrics, trackers a custom train_step
        # keeps as attributes) hold state that is not a weight: Keras leaves it out of
        # weights, weights files and count_params.
        return (Metric,)

    # -- configuration ------------------------------------------------------------------
    @property
    def dtype_policy(self):
        """The layer's ``DTypePolicy`` (assign a policy or a name to change it)."""
        return self._dtype_policy

    @dtype_policy.setter
    def dtype_policy(self, value):
        policy = dtype_policies.get(value)
        current, path = vars(self).get("_dtype_policy"), self.path
        if isinstance(current, dtype_policies.DTypePolicyMap) and path:  # Keras 3: the map's entry changes
            if path in current:
                del current[path]
            current[path] = policy
        else:
            self._dtype_policy = policy
        self._resolve_dtypes()

    def _own_policy(self):
        """The layer's policy: a ``DTypePolicyMap``'s for the layer's path once it has one."""
        policy, path = self._dtype_policy, self.path
        return policy[path] if isinstance(policy, dtype_policies.DTypePolicyMap) and path else policy

    def _resolve_dtypes(self):
        policy = self._own_policy()
        self._dtype = as_dtype(policy.variable_dtype)
        self._compute = as_dtype(policy.compute_dtype)

    @property
    def path(self):
        """Keras 3's ``layer.path``: the name scopes the layer was first built or called in, and
        its name (``"sequential/dense"``); None before then."""
        parent = vars(self).get("_parent_path")
        if parent is None:
            return None
        return f"{parent}/{self.name}" if parent else self.name

    def _fix_parent_path(self):
        """Where ``keras.name_scope`` puts the layer: fixed where it first opens its scope or
        makes a weight (a ``DTypePolicyMap`` takes the layer's path from then on)."""
        if vars(self).get("_parent_path") is None:
            self._parent_path = _context.name_scope_path()
            if isinstance(self._dtype_policy, dtype_policies.DTypePolicyMap):
                self._resolve_dtypes()

    @property
    def dtype(self):
        """The variable dtype (Keras 3's ``layer.dtype``)."""
        return self._dtype

    @property
    def variable_dtype(self):
        """The dtype of the layer's weights, as a string."""
        return self._own_policy().variable_dtype

    @property
    def compute_dtype(self):
        """The dtype the layer computes in (its floating inputs are cast to it), as a string."""
        return self._own_policy().compute_dtype

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        """Freezing a layer freezes its weights and those of its sub-layers, as in Keras 3."""
        value = bool(value)
        for layer in [self] + [m for m in self.submodules if isinstance(m, Layer)]:
            layer._trainable = value
            for variable, declared_trainable in layer.declared_weights():
                variable.trainable = declared_trainable and value

    def get_config(self):
        """The constructor arguments that rebuild this layer with ``from_config``."""
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": dtype_policies.serialize(self._dtype_policy)}
        if getattr(self, "activity_regularizer", None) is not None:
            config["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    @property
    def losses(self):
        """Scalar losses: those added (``add_loss``, activity regularizers) by this layer and its
        sub-layers during the last call, then the weight regularizers' penalties of the trainable
        weights, recomputed from the current values on each access (Keras 3's order)."""
        layers = [self] + [m for m in self.submodules if isinstance(m, Layer)]
        found = [loss for layer in layers for loss in vars(layer).get("_losses", ()) if _usable(loss)]
        penalties = {}
        for layer in layers:
            penalties.update(vars(layer).get("_weight_regularizers", {}))
        for variable in self.trainable_weights if penalties else ():
            regularizer = penalties.get(id(variable))
            if regularizer is not None:
                found.append(regularizer(variable.value()))
        return found

    def add_loss(self, loss):
        """Adds a scalar (or a tensor, summed by ``fit``) to ``layer.losses``; called from ``call``.
        Inside a ``keras.StatelessScope(collect_losses=True)`` the scope collects it instead."""
        scopes = _context.call_state.stateless_scopes
        for item in jax.tree_util.tree_leaves(loss, is_leaf=lambda v: isinstance(v, (Tensor, Variable))):
            if not isinstance(item, (Tensor, Variable)):
                item = Tensor(to_array(item))
            if scopes and scopes[-1].collect_losses:
                scopes[-1].add_loss(item)
                continue
            self._losses.append(item)
            _holding_losses[0] += 1

    def _clear_losses(self):
        if not _holding_losses[0]:  # the common case, no layer holds a loss: no walk over the sub-layers
            return
        for layer in [self] + [m for m in self.submodules if isinstance(m, Layer)]:
            held = vars(layer).get("_losses")
            if held:
                _holding_losses[0] -= len(held)
                held.clear()

    # -- weights ------------------------------------------------------------------------
    def add_weight(self, *args, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
                   regularizer=None, constraint=None, aggregation="none", overwrite_with_gradient=False, name=None):
        """Creates a Variable owned by this layer, named ``<layer>/<name>``.

        Keras 3's signature: positional arguments are ``(shape, initializer, dtype)``. A string
        first is a name, as TF 2 code writes it (``add_weight("kernel", shape=...)``): then the
        positional order is ``(name, shape, initializer, trainable, dtype, regularizer,
        constraint)``, minikeras's own layers' spelling.

        Args:
          shape: the weight's shape (default ``()``).
          initializer: an initializer object or name; default 'glorot_uniform' for floats,
            'zeros' otherwise.
          dtype: default the policy's variable dtype.
          autocast: False keeps this weight in its own dtype when read inside ``call`` under a
            mixed policy (a layer that computes its statistics in float32 reads it so).
          regularizer: a regularizer (or name) whose penalty of this weight is in ``layer.losses``
            (while the weight is trainable).
          constraint: a ``keras.constraints`` object, name or function: the optimizers assign
            ``constraint(weight)`` to the weight after each update.
          aggregation: Keras's cross-replica aggregation ('none', 'mean', 'sum',
            'only_first_replica'); checked and kept by Keras's signature, with nothing to do here:
            ``mk.distribute`` keeps one logical copy of each variable.
        """
        if args:
            order = _NAME_FIRST_ORDER if isinstance(args[0], str) else _KERAS_ORDER
            if len(args) > len(order):
                raise TypeError(f"add_weight() takes at most {len(order)} positional arguments ({', '.join(order)}) "
                                f"but {len(args)} were given")
            given = {"name": name, "shape": shape, "initializer": initializer, "trainable": trainable, "dtype": dtype,
                     "regularizer": regularizer, "constraint": constraint}
            for key, value in zip(order, args):
                if given[key] is not (True if key == "trainable" else None):
                    raise ValueError(f"`{key}` was passed both positionally and as a keyword argument.")
                given[key] = value
            name, shape, initializer, trainable, dtype, regularizer, constraint = (
                given[k] for k in ("name", "shape", "initializer", "trainable", "dtype", "regularizer", "constraint"))
        if aggregation not in ("none", "mean", "sum", "only_first_replica"):
            raise ValueError("Invalid value for argument `aggregation`. Expected one of `None`, `'none'`, `'mean'`, "
                             f"`'sum'`, `'only_first_replica'`. Received: aggregation={aggregation}")
        if overwrite_with_gradient:
            raise ValueError(f"{type(self).__name__} '{self.name}'.add_weight: overwrite_with_gradient=True (a weight "
                             "set to its gradient, for float8 scaling) is not supported")
        self._fix_parent_path()
        dtype = as_dtype(dtype) if dtype is not None else self._dtype
        shape = tuple(int(n) for n in (shape or ()))
        if initializer is None:
            initializer = "glorot_uniform" if dtype.kind == "f" else "zeros"
        init = initializers.get(initializer)
        variable = Variable(lambda: to_array(init(shape, dtype=dtype), dtype), trainable=trainable and self.trainable,
                            name=name or "variable", dtype=dtype, constraint=constraints.get(constraint))
        parent = vars(self)["_parent_path"]
        variable.path = f"{parent}/{self.name}/{variable.name}" if parent else f"{self.name}/{variable.name}"
        self.declared_weights().append((variable, bool(trainable)))
        if not autocast:
            self._read_in_own_dtype([variable])
        if regularizer is not None:
            if "_weight_regularizers" not in vars(self):
                self._weight_regularizers = {}
            self._weight_regularizers[id(variable)] = regularizers.get(regularizer)
        return variable

    def declared_weights(self):
        """``[(variable, trainable as declared)]`` for each ``add_weight`` call, in call order
        (freezing a layer does not change them, so it can be undone; weights files use them)."""
        if "_weight_declarations" not in vars(self):
            self._weight_declarations = []
        return self._weight_declarations

    @property
    def weights(self):
        """Trainable weights, then non-trainable ones (Keras's order)."""
        return self.trainable_weights + self.non_trainable_weights

    @property
    def trainable_weights(self):
        return self.trainable_variables

    @property
    def non_trainable_weights(self):
        """The non-trainable variables but the states of ``SeedGenerator``s (Keras 3 keeps those
        in ``variables``, not in ``weights`` nor weights files)."""
        seeds = {id(m.state) for m in self.submodules if isinstance(m, SeedGenerator)}
        return [v for v in self.non_trainable_variables if id(v) not in seeds]

    def get_weights(self):
        """The weights as a list of NumPy arrays."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        """Sets the weights from NumPy arrays, checking the count and every shape."""
        own = self.weights
        weights = list(weights)
        if len(weights) != len(own):
            raise ValueError(
                f"Layer '{self.name}' expects {len(own)} weights ({[v.path for v in own]}), but set_weights received "
                f"{len(weights)}")
        for variable, value in zip(own, weights):
            shape = tuple(np.shape(value))
            if shape != variable.shape:
                raise ValueError(
                    f"Layer '{self.name}' weight '{variable.path}' has shape {variable.shape}, but set_weights "
                    f"received an array of shape {shape}")
        for variable, value in zip(own, weights):
            variable.assign(np.asarray(value))

    def count_params(self):
        """The number of scalars in the layer's weights (the layer must be built)."""
        if not self.built:
            raise ValueError(f"You tried to call count_params on layer '{self.name}', but the layer isn't built. "
                             "Call it on data (or call build(input_shape)) first.")
        return int(sum(v.size for v in self.weights))

    # -- calling ------------------------------------------------------------------------
    def build(self, input_shape):
        """Creates the layer's weights for ``input_shape``; called once, by ``__call__``."""
        self._record_build_shape(input_shape)
        self.built = True

    def _read_in_own_dtype(self, variables):
        """Exempts ``variables`` from this layer's autocast scope: read during its call, they
        keep their dtype (its ``add_weight(autocast=False)`` weights; a sublayer's weights that
        the sublayer's own policy casts, as an RNN's float32 cell inside a mixed RNN)."""
        self._not_autocast = vars(self).get("_not_autocast", frozenset()) | {id(v) for v in variables}

    def _build_at_init(self):
        """Marks a layer without weights built at construction, as Keras 3 does (its
        ``_build_at_init``), unless a subclass overrides ``build``: that build must still run."""
        if type(self).build is Layer.build:
            self.built = True

    def call(self, inputs, training=None):
        raise NotImplementedError(f"Layer {type(self).__name__} must implement call(inputs)")

    def compute_mask(self, inputs, previous_mask):
        """The mask of the output for ``inputs`` carrying ``previous_mask`` (a boolean tensor, a
        structure of them, or None); by default the previous mask, unchanged. Used after each
        call of a layer whose ``supports_masking`` is True (see ``layers.mask_flow``)."""
        return previous_mask

    def __call__(self, *args, training=None, **kwargs):
        with self.open_name_scope():
            return self._call_in_own_scope(args, training, kwargs)

    def open_name_scope(self):
        """Keras 3's scope of the layer's own name (its ``_open_name_scope``), open while it is
        built and called: the weights of sub-layers built there have its path as their prefix
        (``outer/inner/kernel``). The layer's own prefix is fixed where it first opens it (loading
        opens it where Keras would build the layer from its ``build_config``)."""
        self._fix_parent_path()
        return name_scope(self.name, caller=self)

    def _call_in_own_scope(self, args, training, kwargs):
        inputs, args = self._first_argument(args, kwargs)
        if any_symbolic(inputs) or (args or kwargs) and any_symbolic((args, kwargs)):
            return self._symbolic_call(inputs, args, training, kwargs)
        inputs = self._convert_inputs(inputs)
        self._check_input(inputs)
        state = _context.call_state
        spec_checked = self.input_spec and not state.shape_only  # a symbolic call checked its KerasTensors
        if spec_checked:
            assert_input_compatibility(self.input_spec, inputs, self.name)
        if not self.built:
            self._build_from(inputs)
            if spec_checked and self.input_spec:  # build may have set the spec, as Keras's layers do
                assert_input_compatibility(self.input_spec, inputs, self.name)
        if training is None:
            training = current_training(state)
        if self._call_takes_training:
            kwargs["training"] = training
        if self._call_masks is not None:
            previous_mask = mask_flow.fill_masks(self._call_signature, self._call_masks, inputs, args, kwargs)
        else:
            previous_mask = mask_flow.masks_of(inputs)
        calls = state.training  # this thread's layer call stack: __call__ is its one writer
        if not calls and not state.shape_only:
            self._clear_losses()
        calls.append(training)
        outer = state.autocast
        if outer is not None or self._compute != self._dtype:
            state.autocast = scope_for(self.autocast, self._compute, self._dtype, outer,
                                       vars(self).get("_not_autocast", frozenset()))
        try:
            call = _converted_call(self) if state.traces else self.call
            if vars(self).get("remat_mode") is not None and not state.shape_only:
                call = rematerialized(self, call, inputs)
            outputs = call(inputs, *args, **kwargs)
        finally:
            calls.pop()
            state.autocast = outer
        if state.traces and not state.shape_only:
            distribution = _context.distribution()
            if distribution is not None:  # a layout map may name "<layer name>/output" (keras.distribution)
                outputs = distribution.place_layer_output(self.name, outputs)
        if self.activity_regularizer is not None and not state.shape_only:
            self._add_activity_losses(outputs)
        if previous_mask is not None or self._computes_masks:
            mask_flow.set_output_masks(self, inputs, outputs, previous_mask)
        if isinstance(outputs, Tensor):
            self._output_shape = (None,) + outputs.shape[1:] if outputs.ndim else ()
        return outputs

    def _first_argument(self, args, kwargs):
        """``call``'s first argument and the positional ones after it: as Keras 3, the first may
        also be given by its name (``decoder(x=tokens, context=encoded)``), taken out of ``kwargs``."""
        if args:
            return args[0], args[1:]
        first = next(iter(inspect.signature(self.call).parameters), None)
        if first not in kwargs and "inputs" in kwargs:
            first = "inputs"
        if first is None or first not in kwargs:
            raise TypeError(f"{type(self).__name__} '{self.name}' was called without inputs: pass them as the first "
                            f"argument{'' if first is None else f' or as {first}='}")
        return kwargs.pop(first), ()

    # -- the functional API -------------------------------------------------------------
    def _symbolic_call(self, inputs, args, training, kwargs):
        """A call on KerasTensors (``mk.Input``'s): builds the layer, finds the output shapes by
        tracing the call abstractly, records a graph Node and returns symbolic outputs."""
        if self.input_spec:
            assert_input_compatibility(self.input_spec, inputs, self.name)
        if not self.built:
            Layer._check_input(self, inputs)  # the rank; subclasses check values in the traced call below
            self._build_from(inputs)
            if self.input_spec:
                assert_input_compatibility(self.input_spec, inputs, self.name)
        if training is not None:  # an explicit flag is part of the node, as in Keras
            kwargs = dict(kwargs, training=training)

        # Masks ride on the symbolic tensors (not graph edges): the abstract call gets them as
        # values, and the output masks it computes ride on the symbolic outputs.
        in_masks = [mask_flow.get_mask(t) for t in flatten((inputs, args, kwargs))]

        def abstract(in_masks, inputs, *args, **kwargs):
            tensors = jax.tree_util.tree_map(lambda v: Tensor(v) if is_tracer(v) else v, (inputs, args, kwargs))
            if any(m is not None for m in in_masks):
                carriers = [t for t in jax.tree_util.tree_leaves(tensors, is_leaf=lambda t: isinstance(t, Tensor))
                            if isinstance(t, Tensor)]
                for tensor, mask in zip(carriers, in_masks):
                    if mask is not None:
                        mask_flow.set_mask(tensor, mask if isinstance(mask, Tensor) else Tensor(mask))
            with _context.evaluating_shapes():
                outputs = self(tensors[0], *tensors[1], **tensors[2])
            flat = jax.tree_util.tree_leaves(outputs, is_leaf=lambda t: isinstance(t, Tensor))
            out_masks = [getattr(mask_flow.get_mask(t), "_value", None) for t in flat]
            return jax.tree_util.tree_map(lambda t: t._value if isinstance(t, Tensor) else t, outputs,
                                          is_leaf=lambda t: isinstance(t, Tensor)), out_masks
        outputs, out_masks = output_spec(abstract, (in_masks, inputs) + tuple(args), kwargs, f"Layer '{self.name}'",
                                         stateful_eval_shape)
        nodes = self._inbound_nodes()
        nodes.append(Node(self, (inputs,) + tuple(args), kwargs, outputs, index=len(nodes)))
        for tensor, mask in zip(jax.tree_util.tree_leaves(outputs, is_leaf=lambda t: isinstance(t, KerasTensor)),
                                out_masks):
            if mask is not None and isinstance(tensor, KerasTensor):
                mask_flow.set_mask(tensor, mask)
        first = flatten(outputs)
        if len(first) == 1:
            self._output_shape = first[0].shape
        return outputs

    def _inbound_nodes(self):
        """The graph Nodes of this layer's calls on KerasTensors, in order."""
        if "_inbound" not in vars(self):
            self._inbound = []
        return self._inbound

    def _node_tensors(self, what):
        calls = vars(self).get("_inbound")
        if not calls:
            raise AttributeError(f"Layer '{self.name}' is not connected: it has never been called on a symbolic "
                                 f"input (mk.Input), so it has no {what}")
        node = calls[0]
        tensors = node.input_tensors if what == "input" else node.output_tensors
        return tensors[0] if len(tensors) == 1 else list(tensors)

    @property
    def input(self):
        """The KerasTensor(s) this layer was first called on while building a functional model."""
        return self._node_tensors("input")

    @property
    def output(self):
        """The KerasTensor(s) the first such call returned."""
        return self._node_tensors("output")

    def _add_activity_losses(self, outputs):
        for output in jax.tree_util.tree_leaves(outputs, is_leaf=lambda v: isinstance(v, Tensor)):
            if isinstance(output, Tensor):
                loss = self.activity_regularizer(output)
                if output.ndim and output.shape[0]:  # Keras divides by the batch size
                    loss = loss / cast(output.shape[0], loss.dtype)
                self.add_loss(loss)

    def _build_from(self, inputs):
        shapes = jax.tree_util.tree_map(lambda t: t.shape, inputs,
                                        is_leaf=lambda x: isinstance(x, (Tensor, Variable)))
        # Weights are process state, made once: a build reached inside a trace (mk.function,
        # or the abstract evaluation of a shape) computes them eagerly, random draws included.
        with _context.outside_traces(), jax.ensure_compile_time_eval():
            self.build(shapes)
        self._record_build_shape(shapes)
        self.built = True

    def _convert_inputs(self, inputs):
        def convert(x):
            if isinstance(x, (Tensor, Variable)):
                tensor = x if isinstance(x, Tensor) else x.value()
            elif is_string_value(x):  # a model may start with string preprocessing layers
                tensor = string_tensor(x)
            else:
                tensor = Tensor(to_array(x))
            if tensor.dtype == object:
                self._check_takes_strings(tensor)
                return tensor
            if tensor.dtype != self._compute and self.autocast and is_floating(tensor.dtype):
                mask = mask_flow.get_mask(tensor)
                tensor = cast(tensor, self._compute)
                mask_flow.set_mask(tensor, mask)
            return tensor
        def convert_nested(x):  # inside a list or dict: a list of numbers is one Tensor, of tensors a structure
            if isinstance(x, dict) or isinstance(x, (list, tuple)) and not is_string_value(x) and any(
                    isinstance(v, (list, tuple, dict, Tensor, Variable, np.ndarray)) for v in x):
                return structure(x)
            return convert(string_tensor(x) if isinstance(x, (list, tuple)) and is_string_value(x) else x)

        def structure(x):
            if isinstance(x, (list, tuple)):
                return type(x)(convert_nested(v) for v in x)
            return {k: convert_nested(v) for k, v in x.items()}

        if isinstance(inputs, (list, tuple)) and is_string_value(inputs):
            return convert(string_tensor(inputs))  # a list of strings is one string Tensor, as in Keras
        if isinstance(inputs, (list, tuple, dict)):
            return structure(inputs)
        return convert(inputs)

    def _check_takes_strings(self, tensor):
        if not (self.takes_strings or getattr(self, "saves_layers", False)):  # a model checks its layers
            raise string_refusal(f"{type(self).__name__} '{self.name}' expects numbers, received strings of shape "
                                 f"{tensor.shape}")

    def _check_input(self, inputs):
        if not isinstance(inputs, (Tensor, KerasTensor)):
            return
        if self.input_ndim is not None and inputs.ndim != self.input_ndim:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim={self.input_ndim}, "
                f"found ndim={inputs.ndim}. Full shape received: {inputs.shape}")
        if self.min_ndim is not None and inputs.ndim < self.min_ndim:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected min_ndim={self.min_ndim}, "
                f"found ndim={inputs.ndim}. Full shape received: {inputs.shape}")

    def compute_output_shape(self, input_shape):
        """The output shape for ``input_shape`` (None for unknown batch), by abstract evaluation."""
        batch_shape = tuple(1 if n is None else n for n in input_shape)
        if not self.built:
            self._build_from(Tensor(jax.numpy.zeros(batch_shape, self._compute)))
        with _context.evaluating_shapes():
            out = stateful_eval_shape(lambda x: self(x[0])._value, [jax.ShapeDtypeStruct(batch_shape, self._compute)])
        shape = tuple(out.shape)
        return (input_shape[0],) + shape[1:] if input_shape and input_shape[0] is None else shape

    @property
    def output_shape(self):
        if self._output_shape is None:
            raise AttributeError(f"The layer '{self.name}' has never been called and thus has no defined output shape")
        return self._output_shape


def stateful_eval_shape(fn, specs):
    """``jax.eval_shape(fn, specs)`` for a layer call: traced as ``mk.function`` traces, so that
    the call may assign Variables (BatchNormalization's statistics, a random generator) and
    create them (a sub-layer's first call); every Variable gets its value back afterwards."""
    specs = list(specs)
    treedef = jax.tree_util.tree_structure(((specs,), {}))
    traced = trace(fn, treedef, list(specs), list(range(len(specs))), specs)
    avals = iter(traced.jaxpr.out_avals)  # the outputs first, then the assigned Variables' values
    leaves = []
    for is_array, static in zip(traced.out_is_array, traced.out_static):
        aval = next(avals) if is_array else None
        leaves.append(jax.ShapeDtypeStruct(aval.shape, aval.dtype) if is_array else static)
    return jax.tree_util.tree_unflatten(traced.out_tree, leaves)


_CONVERTED_CALLS = {}  # layer class -> its call converted by autograph


def _converted_call(layer):
    """``layer.call`` with Python control flow on Tensors converted by autograph, as TensorFlow
    converts a layer's ``call`` inside ``tf.function``; converted once per class."""
    if "call" in vars(layer):  # a call set on the instance: run as given
        return layer.call
    cls = type(layer)
    converted = _CONVERTED_CALLS.get(cls)
    if converted is None:
        converted = _CONVERTED_CALLS[cls] = autograph.convert(cls.call)
    return converted.__get__(layer, cls)


def _usable(loss):
    """False for a loss left by a call traced inside ``mk.function`` once that trace is over."""
    return _context.call_state.traces or not isinstance(getattr(loss, "_value", None), jax.core.Tracer)

"""``keras.Operation``: the base class of a custom op, as Keras 3's ``ops.operation.Operation``.

    class ScaleShift(keras.Operation):
        def __init__(self, factor=2.0, name=None):
            super().__init__(name=name)
            self.factor = factor

        def call(self, x):
            return keras.ops.multiply(x, self.factor) + 1

    op = ScaleShift(3.0)
    op(np.ones((2, 3)))            # a Tensor: call() on values
    x = keras.Input((3,))
    y = op(x)                      # a KerasTensor: one node of the functional graph
    keras.Model(x, y)              # replays op.call on the model's inputs

Called on values it runs ``call``; called with a KerasTensor anywhere in its arguments it runs
``symbolic_call``: ``compute_output_spec`` gives the output KerasTensors (by default ``call``
traced abstractly, as every minikeras op on symbolic tensors) and a graph node records the call.
``get_config`` is written automatically from the constructor's arguments when they are plain
values (str, int, float, bool, None, and lists/tuples/dicts of them), as Keras does.
"""
import inspect

import jax

from minikeras.module import snake_case, unique_name
from minikeras.symbolic import Node, any_symbolic, output_spec
from minikeras.tensor import Tensor

_PLAIN = (str, int, float, bool, type(None))


def _plain_values(value):
    leaves = jax.tree_util.tree_leaves(value, is_leaf=lambda x: x is None)
    return all(isinstance(leaf, _PLAIN) for leaf in leaves)


def _arrays(structure):
    return jax.tree_util.tree_map(lambda x: x._value if isinstance(x, Tensor) else x, structure,
                                  is_leaf=lambda x: isinstance(x, Tensor))


class Operation:
    """A computation on tensors that also works on symbolic tensors (``keras.Operation``).

    Subclasses implement ``call(*args, **kwargs)``; they may implement
    ``compute_output_spec(*args, **kwargs)`` (returning KerasTensors) when ``call`` cannot be
    traced abstractly, and ``get_config`` when their constructor takes non-plain values.

    Args:
      name: the operation's name (a string without ``/``); by default the class name in
        snake case, numbered when taken (``my_op``, ``my_op_1``, ...).
    """

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        try:
            bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
        except TypeError:
            instance._auto_config = None  # __init__ itself will raise the error
            return instance
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(arguments)))  # self
        for parameter in inspect.signature(cls.__init__).parameters.values():
            if parameter.kind == parameter.VAR_KEYWORD and parameter.name in arguments:
                arguments.update(arguments.pop(parameter.name))
            elif parameter.kind == parameter.VAR_POSITIONAL:
                arguments.pop(parameter.name, None)
        instance._auto_config = arguments if _plain_values(arguments) else None
        return instance

    def __init__(self, name=None):
        if name is None:
            name = unique_name(snake_case(type(self).__name__))
        if not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character `/`. "
                             f"Received: name={name} (of type {type(name)})")
        self.name = name
        self._inbound_nodes = []

    def __call__(self, *args, **kwargs):
        if any_symbolic((args, kwargs)):
            return self.symbolic_call(*args, **kwargs)
        return self.call(*args, **kwargs)

    def call(self, *args, **kwargs):
        """The computation on values; subclasses implement it."""
        raise NotImplementedError(f"{type(self).__name__} '{self.name}' has no call(): a keras.Operation subclass "
                                  "implements call(*args, **kwargs), the computation on tensors")

    def symbolic_call(self, *args, **kwargs):
        """The output KerasTensors of this call, recorded as a node of the functional graph."""
        outputs = self.compute_output_spec(*args, **kwargs)
        self._inbound_nodes.append(Node(self, args, kwargs, outputs, index=len(self._inbound_nodes)))
        return outputs

    def compute_output_spec(self, *args, **kwargs):
        """The KerasTensors (shapes and dtypes) ``call`` returns for these symbolic arguments;
        by default ``call`` traced abstractly."""
        kind = type(self).__name__
        try:
            return output_spec(lambda *a, **k: _arrays(self.call(*a, **k)), args, kwargs, f"{kind} '{self.name}'")
        except NotImplementedError:
            raise
        except Exception as error:
            message = (f"Could not automatically infer the output shape / dtype of '{self.name}' (of type {kind}). "
                       f"Either the `{kind}.call()` method is incorrect, or you need to implement the "
                       f"`{kind}.compute_output_spec() / compute_output_shape()` method. Error encountered:\n\n"
                       f"{error}")
            try:
                new_error = type(error)(message)
            except Exception:
                new_error = ValueError(message)
            raise new_error from error

    def _node_attribute(self, attribute, what):
        if not self._inbound_nodes:
            raise AttributeError(f"The operation '{self.name}' has never been called on symbolic tensors and thus "
                                 f"has no defined {what}.")
        if len(self._inbound_nodes) > 1:
            raise AttributeError(f"The operation '{self.name}' has been called {len(self._inbound_nodes)} times on "
                                 f"symbolic tensors, so its {what} is ambiguous")
        tensors = getattr(self._inbound_nodes[0], attribute)
        return tensors[0] if len(tensors) == 1 else list(tensors)

    @property
    def input(self):
        """The symbolic input of the operation's one call (a list when it took several)."""
        return self._node_attribute("input_tensors", "input")

    @property
    def output(self):
        """The symbolic output of the operation's one call (a list when it gave several)."""
        return self._node_attribute("output_tensors", "output")

    def get_config(self):
        """``{"name": ...}`` and, when the subclass does not write its own, the constructor's
        arguments (which must then be plain values)."""
        config = {"name": self.name}
        if type(self).get_config is not Operation.get_config:
            return config
        if self._auto_config is None:
            raise NotImplementedError(
                f"Object {type(self).__name__} was created by passing non-serializable argument values in "
                "`__init__()`, and therefore the object must override `get_config()` in order to be "
                "serializable. Please implement `get_config()`.")
        config.update(self._auto_config)
        parameters = inspect.signature(type(self).__init__).parameters
        if "name" not in parameters and not any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
            config.pop("name")
        return config

    @classmethod
    def from_config(cls, config):
        """``cls(**config)``: a new operation from ``get_config()``'s dict."""
        try:
            return cls(**config)
        except Exception as error:
            raise TypeError(f"Error when deserializing class '{cls.__name__}' using config={config}.\n\n"
                            f"Exception encountered: {error}") from error

    def __repr__(self):
        return f"<Operation name={self.name}>"

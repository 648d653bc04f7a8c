"""``OptimizerMap`` and ``MultiOptimizer``: different optimizers for different variables, as Keras 3.

An ``OptimizerMap`` picks an optimizer for a variable from its ``path`` (an exact key, else the
one key that ``re.fullmatch``-es it, else the default). ``MultiOptimizer`` routes each variable
through such a map (or any callable ``variable -> optimizer``) when it is built; every
sub-optimizer keeps its own slots, learning rate and ``iterations``, and sees only its
variables, so a step equals running each sub-optimizer on its variables alone.
"""
import re
from collections.abc import MutableMapping

from minikeras.optimizers.base import Optimizer
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer


def _serialize_optimizer(optimizer):
    from minikeras.optimizers import serialize  # the package's serializer: its __init__ imports this module
    return serialize(optimizer)


def _deserialize_optimizer(config, custom_objects):
    from minikeras.optimizers import deserialize  # as _serialize_optimizer
    return deserialize(config, custom_objects)


class OptimizerMap(MutableMapping):
    """Maps variable paths (exact keys or ``re.fullmatch`` patterns) to optimizers
    (``mk.optimizers.OptimizerMap``).

    Args:
      default_optimizer: the optimizer of any variable no key matches.
      optimizer_map: an optional dict ``{path or pattern: optimizer}``.

    Example::

        opt_map = mk.optimizers.OptimizerMap(default_optimizer=mk.optimizers.SGD())
        opt_map["encoder/.*"] = mk.optimizers.Adam()   # "encoder" alone matches only that path
        opt_map["encoder/layer_0/dense"].name           # 'adam'

    Raises:
      TypeError: when ``default_optimizer`` is not an Optimizer or ``optimizer_map`` not a dict.
    """

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(f"default_optimizer must be a Keras Optimizer instance. Received: {default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = dict(optimizer_map or {})

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        """The optimizer of path ``key``: an exact key's, else the one pattern's that
        ``re.fullmatch``-es it, else ``default_optimizer``.

        Raises:
          ValueError: when ``key`` matches more than one pattern.
        """
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [pattern for pattern in self._optimizer_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        if matching:
            return self._optimizer_map[matching[0]]
        return self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value {self._optimizer_map[key]}. "
                             "Please make sure to not use duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"optimizer must be a Keras Optimizer instance. Received: {optimizer}")
        if isinstance(optimizer, LossScaleOptimizer):
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        if isinstance(optimizer, MultiOptimizer):
            raise ValueError("optimizer cannot be MultiOptimizer.")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        """The optimizer of ``variable`` (looked up by its ``path``)."""
        return self[variable.path]

    def get_config(self):
        return {"default_optimizer": _serialize_optimizer(self._default_optimizer),
                "optimizer_map": {key: _serialize_optimizer(opt) for key, opt in self._optimizer_map.items()}}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        default = _deserialize_optimizer(config["default_optimizer"], custom_objects)
        mapped = {key: _deserialize_optimizer(opt, custom_objects)
                  for key, opt in (config.get("optimizer_map") or {}).items()}
        return cls(default, mapped)


def _serialize_selector(selector):
    if isinstance(selector, OptimizerMap):
        return {"module": "minikeras.optimizers", "class_name": "OptimizerMap", "config": selector.get_config(),
                "registered_name": None}
    # Keras saves a selector function by name; loading needs it in custom_objects
    return {"module": "builtins", "class_name": "function", "config": getattr(selector, "__name__", repr(selector)),
            "registered_name": "function"}


def _deserialize_selector(config, custom_objects):
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"MultiOptimizer: `optimizer_map` in a config must be a serialized OptimizerMap or "
                         f"function. Received: optimizer_map={config!r}")
    if config["class_name"] == "function":
        name = config["config"]
        found = (custom_objects or {}).get(name)
        if found is None:
            raise ValueError(f"MultiOptimizer: unknown optimizer selector function {name!r}: pass it in "
                             f"custom_objects={{'{name}': ...}} when loading")
        return found
    if config["class_name"] != "OptimizerMap":
        raise ValueError(f"MultiOptimizer: `optimizer_map` must be an OptimizerMap or a function. Received "
                         f"class_name={config['class_name']!r}")
    return OptimizerMap.from_config(config["config"], custom_objects)


class MultiOptimizer(Optimizer):
    """An optimizer that delegates each variable to a sub-optimizer (``mk.optimizers.MultiOptimizer``).

    Args:
      optimizer_map: an ``OptimizerMap``, or a callable returning the optimizer of a variable.
      loss_scale_factor: replaces the sub-optimizers' own ``loss_scale_factor``.
      name: the optimizer's name (default ``'multi_optimizer'``).

    Example::

        opt_map = mk.optimizers.OptimizerMap(mk.optimizers.SGD(0.1))
        opt_map["encoder/.*"] = mk.optimizers.Adam(1e-3)
        model.compile(optimizer=mk.optimizers.MultiOptimizer(opt_map), loss="mse")

    ``optimizers`` lists the sub-optimizers (the map's values, then its default, then any other
    a callable returns); ``variables`` is its own ``iterations`` and learning rate, then each
    sub-optimizer's. ``learning_rate`` is not defined: read or set it on a sub-optimizer.

    Raises:
      TypeError: when ``optimizer_map`` is not callable.
      ValueError: at build, when a variable's optimizer is not an Optimizer, or is a
        LossScaleOptimizer or a MultiOptimizer.
    """

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        if not callable(optimizer_map):
            raise TypeError(f"MultiOptimizer expects an OptimizerMap or a callable returning the optimizer of a "
                            f"variable. Received: optimizer_map={optimizer_map!r}")
        super().__init__(learning_rate=0.0, loss_scale_factor=loss_scale_factor, name=name)
        self._optimizer_map = optimizer_map
        self._inner_optimizers = []
        self._optimizer_index = {}  # id(variable) -> index into _inner_optimizers
        candidates = list(optimizer_map.values()) if hasattr(optimizer_map, "values") else []
        candidates.append(getattr(optimizer_map, "default_optimizer", None))
        for opt in candidates:
            if opt is not None and not any(opt is known for known in self._inner_optimizers):
                opt.loss_scale_factor = loss_scale_factor
                self._inner_optimizers.append(opt)

    def _index_of(self, optimizer):
        return next(i for i, known in enumerate(self._inner_optimizers) if known is optimizer)

    def build(self, var_list):
        """Routes every variable to its optimizer and builds each on its own variables."""
        if self.built:
            return
        var_list = list(var_list)
        routed = [[] for _ in self._inner_optimizers]
        for variable in var_list:
            opt = self._optimizer_map(variable)
            if not isinstance(opt, Optimizer):
                raise ValueError(f"Optimizer for variable {variable} is not an Optimizer instance.")
            if isinstance(opt, LossScaleOptimizer):
                raise ValueError("LossScaleOptimizer cannot be used inside an MultiOptimizer.")
            if isinstance(opt, MultiOptimizer):
                raise ValueError("MultiOptimizer cannot be used inside an MultiOptimizer.")
            if not any(opt is known for known in self._inner_optimizers):
                opt.loss_scale_factor = self.loss_scale_factor
                self._inner_optimizers.append(opt)
                routed.append([])
            index = self._index_of(opt)
            self._optimizer_index[id(variable)] = index
            routed[index].append(variable)
        for opt, variables in zip(self._inner_optimizers, routed):
            if variables:
                opt.build(variables)
        super().build(var_list)

    @property
    def optimizers(self):
        """The sub-optimizers, in the order their variables are saved."""
        return self._inner_optimizers

    @property
    def variables(self):
        own = list(self._variables)
        for opt in self._inner_optimizers:
            own.extend(opt.variables)
        return own

    @property
    def learning_rate(self):
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access the learning rate on the "
                             "individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value):
        if "_optimizer_map" not in vars(self):  # the base class's own 0.0, set by its __init__
            Optimizer.learning_rate.fset(self, value)
            return
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the learning rate on the "
                             "individual sub-optimizers instead.")

    @property
    def loss_scale_factor(self):
        return vars(self).get("_loss_scale_factor")

    @loss_scale_factor.setter
    def loss_scale_factor(self, value):
        self._loss_scale_factor = value
        for opt in vars(self).get("_inner_optimizers", ()):
            opt.loss_scale_factor = value

    def _grouped(self, grads, variables):
        groups = [([], []) for _ in self._inner_optimizers]
        for grad, variable in zip(grads, variables):
            sub_grads, sub_vars = groups[self._optimizer_index[id(variable)]]
            sub_grads.append(grad)
            sub_vars.append(variable)
        return [(opt, g, v) for opt, (g, v) in zip(self._inner_optimizers, groups) if v]

    def apply(self, grads, trainable_variables=None):
        """Applies each sub-optimizer to its variables' gradients, then counts one step."""
        grads = list(grads)
        if not grads:
            return
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `variables`, the optimizer must already be built on "
                                 "a list of variables. Call `optimizer.build(trainable_variables)` first.")
            trainable_variables = self._trainable_variables
        variables = list(trainable_variables)
        if not self.built:
            self.build(variables)
        if len(grads) != len(self._trainable_variables):
            raise ValueError(f"Gradients must match trainable variables one-to-one. Received {len(grads)} gradients "
                             f"and {len(self._trainable_variables)} variables.")
        self._check_variables_are_known(variables)
        for opt, sub_grads, sub_vars in self._grouped(grads, variables):
            if any(g is not None for g in sub_grads):
                opt.apply(sub_grads, sub_vars)
        self._iterations.assign_add(1)

    def _apply_update(self, grads, variables, learning_rate=None):
        # traced inside a wrapper's update (a LossScaleOptimizer around this one)
        for opt, sub_grads, sub_vars in self._grouped(grads, variables):
            opt._apply_update(sub_grads, sub_vars)
        self._iterations.assign_add(1)

    def finalize_variable_values(self, var_list):
        for opt, _, sub_vars in self._grouped([None] * len(var_list), var_list):
            opt.finalize_variable_values(sub_vars)

    def get_weights(self):
        return [v.numpy() for v in self.variables]

    def set_weights(self, weights):
        """Sets its own variables, then each sub-optimizer's, in ``variables``' order."""
        if not self.built:
            raise ValueError("You are calling `set_weights()` on an optimizer that has not yet been built. Please "
                             "call `optimizer.build(trainable_variables)` to create the optimizer weights before "
                             "calling `set_weights()`.")
        if len(weights) != len(self.variables):
            raise ValueError(f"Optimizer '{self.name}' has {len(self.variables)} variables, received "
                             f"{len(weights)} weights")
        start = len(self._variables)
        for variable, weight in zip(self._variables, weights):
            variable.assign(weight)
        for opt in self._inner_optimizers:
            count = len(opt.variables)
            if count:
                opt.set_weights(list(weights[start:start + count]))
                start += count

    def get_config(self):
        return {"optimizer_map": _serialize_selector(self._optimizer_map),
                "loss_scale_factor": self.loss_scale_factor, "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["optimizer_map"] = _deserialize_selector(config["optimizer_map"], custom_objects)
        return cls(**config)

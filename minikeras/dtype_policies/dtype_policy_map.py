"""Keras 3's ``DTypePolicyMap``: layer paths (or regular expressions over them) mapped to dtype
policies, itself a policy (its default one's) that a layer takes as ``dtype``; the layer then
computes and keeps its weights in the policy of its own ``path``.

    policy_map = keras.dtype_policies.DTypePolicyMap(default_policy="float32")
    policy_map["dense"] = "bfloat16"
    policy_map["block/.*"] = "mixed_bfloat16"
    keras.layers.Dense(4, dtype=policy_map, name="dense")   # bfloat16 once built at path "dense"

``serialize``/``deserialize``/``get`` here are the package's: they know the map and leave the
plain policies to ``dtype_policy.py``.
"""
from collections.abc import MutableMapping

from minikeras import path_patterns
from minikeras.dtype_policies import dtype_policy
from minikeras.dtype_policies.dtype_policy import DTypePolicy


class DTypePolicyMap(DTypePolicy, MutableMapping):
    """A dict-like map of layer paths to ``DTypePolicy``s, as ``keras.dtype_policies.DTypePolicyMap``.

    A key is a layer path (``"encoder/dense"``) or a regular expression matched in full against
    one (``"encoder/.*"``); an exact key wins, a path matching no key gets ``default_policy``,
    and a path matching several patterns is a ValueError. As a policy itself (a layer's
    ``dtype_policy`` before it has a path) it is its default policy: ``compute_dtype``,
    ``variable_dtype``, and the name ``"map_<default>"``.

    Args:
      default_policy: the policy of unmatched paths (a policy, a name or None: the global policy,
        read when asked, as Keras 3).
      policy_map: a dict of keys to policies.
    """

    def __init__(self, default_policy=None, policy_map=None):
        if isinstance(default_policy, DTypePolicyMap):
            raise ValueError("`default_policy` cannot be a `DTypePolicyMap`.")
        if policy_map is not None and not isinstance(policy_map, dict):
            raise TypeError(f"If specified, `policy_map` must be a dict. Received: policy_map={policy_map} of type "
                            f"{type(policy_map)}")
        self._default_policy_arg = default_policy
        self._default_policy = None if default_policy is None else dtype_policy.get(default_policy)
        self._policy_map = {key: get(value) for key, value in (policy_map or {}).items()}

    @property
    def default_policy(self):
        """The policy of paths no key matches (the global policy where none was given)."""
        return self._default_policy if self._default_policy is not None else dtype_policy.global_policy()

    @property
    def name(self):
        return f"map_{self.default_policy.name}"

    @property
    def compute_dtype(self):
        return self.default_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self.default_policy.variable_dtype

    @property
    def quantization_mode(self):
        return self.default_policy.quantization_mode

    def __getitem__(self, key):
        """The policy of the layer path ``key``: an exact key's, else the one pattern
        ``re.fullmatch``-ing it, else ``default_policy``."""
        found, policy = path_patterns.lookup(self._policy_map, key, "dtype policy", "path", "DTypePolicyMap")
        return policy if found else self.default_policy

    def __setitem__(self, key, policy):
        path_patterns.check_new_key(self._policy_map, key, "DTypePolicyMap")
        try:
            policy = get(policy)
        except Exception:
            raise ValueError("Cannot interpret the assigned value by `keras.dtype_policies.get`. Received: "
                             f"{policy} of type {type(policy)}") from None
        self._policy_map[key] = policy

    def __delitem__(self, key):
        return self._policy_map.pop(key)

    def __contains__(self, key):
        return key in self._policy_map

    def __len__(self):
        return len(self._policy_map)

    def __iter__(self):
        return iter(self._policy_map)

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__

    def get_config(self):
        """Keras 3's config: ``default_policy`` as given, each policy serialized (with a null
        name where no default was given, so that loading takes the global policy, as Keras)."""
        policies = {key: serialize(policy) for key, policy in self._policy_map.items()}
        if self._default_policy_arg is None:
            for config in policies.values():
                config["config"]["name"] = None
        return {"default_policy": self._default_policy_arg, "policy_map": policies}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["policy_map"] = {key: deserialize(value, custom_objects) if isinstance(value, dict) else get(value)
                                for key, value in (config.get("policy_map") or {}).items()}
        return cls(**config)

    def __repr__(self):
        default = None if self._default_policy is None else self._default_policy.name
        mapping = [(key, policy.name) for key, policy in self._policy_map.items()]
        return f"<DTypePolicyMap default_policy={default}, mapping={mapping}>"


def serialize(policy):
    """A policy's config as Keras 3 writes it: ``{"module", "class_name", "config", "registered_name"}``."""
    if isinstance(policy, DTypePolicyMap):
        return {"module": "keras.dtype_policies", "class_name": "DTypePolicyMap", "config": policy.get_config(),
                "registered_name": None}
    return dtype_policy.serialize(policy)


def deserialize(config, custom_objects=None):
    """The policy of ``serialize``'s dict (a ``DTypePolicy`` or a ``DTypePolicyMap``)."""
    if isinstance(config, dict) and config.get("class_name") == "DTypePolicyMap":
        return DTypePolicyMap.from_config(config.get("config") or {}, custom_objects)
    return dtype_policy.deserialize(config, custom_objects)


def get(identifier):
    """A policy from None (the global one), a name, a dtype, a config dict or a policy (a
    ``DTypePolicyMap`` included).

    Raises:
      ValueError: for a value that names no policy.
    """
    if isinstance(identifier, dict):
        return deserialize(identifier)
    return dtype_policy.get(identifier)

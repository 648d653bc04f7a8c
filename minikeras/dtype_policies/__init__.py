"""``mk.dtype_policies`` (Keras 3's ``keras.dtype_policies``): layers' dtype policies.

    mk.mixed_precision.set_global_policy("mixed_bfloat16")   # layers compute in bfloat16
    layer = mk.layers.Dense(10, dtype="float32")              # one layer in float32
    policy_map = mk.dtype_policies.DTypePolicyMap()           # a policy per layer path

See docs/mixed_precision.md.
"""
from minikeras.dtype_policies.dtype_policy import (  # noqa: F401
    DTypePolicy, FloatDTypePolicy, global_policy, set_global_policy)
from minikeras.dtype_policies.dtype_policy_map import DTypePolicyMap, deserialize, get, serialize  # noqa: F401

__all__ = ["DTypePolicy", "DTypePolicyMap", "FloatDTypePolicy", "get", "serialize", "deserialize"]

"""``mk.dtype_policies`` (Keras 3's ``keras.dtype_policies``): layers' dtype policies.

    mk.mixed_precision.set_global_policy("mixed_bfloat16")   # layers compute in bfloat16
    layer = mk.layers.Dense(10, dtype="float32")              # one layer in float32

See docs/mixed_precision.md.
"""
from minikeras.dtype_policies.dtype_policy import (  # noqa: F401
    DTypePolicy, FloatDTypePolicy, deserialize, get, global_policy, serialize, set_global_policy)

__all__ = ["DTypePolicy", "FloatDTypePolicy", "get", "serialize", "deserialize"]

"""``mk.mixed_precision`` (``tf.keras.mixed_precision``, ``keras.mixed_precision``): compute in
bfloat16 or float16 with float32 weights.

    mk.mixed_precision.set_global_policy("mixed_bfloat16")
    model = mk.Sequential([..., mk.layers.Dense(10), mk.layers.Activation("softmax", dtype="float32")])

``Policy``/``DTypePolicy`` name a layer's compute and variable dtypes, ``set_global_policy`` sets
the default of layers made afterwards (in this thread), and ``LossScaleOptimizer`` scales the
loss so that float16 gradients do not underflow (``compile`` adds it under 'mixed_float16').
See docs/mixed_precision.md.
"""
from minikeras.dtype_policies.dtype_policy import (  # noqa: F401
    DTypePolicy, global_policy, set_global_policy)
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer  # noqa: F401

Policy = DTypePolicy  # TF's and Keras's legacy name
dtype_policy = global_policy  # Keras 3's names
set_dtype_policy = set_global_policy

__all__ = ["DTypePolicy", "Policy", "LossScaleOptimizer", "set_global_policy", "global_policy", "set_dtype_policy",
           "dtype_policy"]

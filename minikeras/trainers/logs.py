"""The logs fit and evaluate hand to callbacks: Python floats, fetched only when needed.

A compiled step returns its logs as device arrays. Turning them into floats waits for the
step to finish, so fit does it once per epoch unless a callback acts on every batch: then
the next step cannot be dispatched while the device still computes the current one.
"""
import jax
import numpy as np

from minikeras.callbacks import Callback
from minikeras.tensor import Tensor, Variable

TRAIN_BATCH_HOOKS = ("on_train_batch_begin", "on_train_batch_end", "on_batch_begin", "on_batch_end")
TEST_BATCH_HOOKS = ("on_test_batch_begin", "on_test_batch_end")


def to_floats(logs):
    """The logs with scalar values as Python floats (one device-to-host transfer for all)."""
    if logs is None:
        return {}
    if not isinstance(logs, dict):
        raise TypeError(f"train_step/test_step must return a dict of metric values, received {type(logs).__name__}")
    arrays = {k: v._value if isinstance(v, Tensor) else v.numpy() if isinstance(v, Variable) else v
              for k, v in logs.items() if isinstance(v, (Tensor, Variable, np.ndarray, jax.Array, np.generic))}
    # as in jax.device_get, every copy starts before the first wait (but device_get's own
    # machinery costs ~0.2 ms a call, a few percent of a whole fit call of a tiny model; and a
    # single copy gains nothing from starting early)
    if len(arrays) > 1:
        for value in arrays.values():
            if isinstance(value, jax.Array):
                value.copy_to_host_async()
    fetched = {k: np.asarray(v) for k, v in arrays.items()}
    out = {}
    for key, value in logs.items():
        if key in fetched:
            value = fetched[key]
            value = float(np.asarray(value).reshape(())) if np.size(value) == 1 else np.asarray(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            value = float(value)
        out[key] = value
    return out


def wants_batch_logs(callbacks, hooks):
    """Whether any of ``callbacks`` overrides one of the batch ``hooks`` (by subclassing, or as
    LambdaCallback does, on the instance). When none does, the loop skips those hooks."""
    for callback in callbacks:
        for hook in hooks:
            if hook in vars(callback) or getattr(type(callback), hook) is not getattr(Callback, hook):
                return True
    return False

"""``mk.device``: where new eager values live, as ``tf.device`` (over ``jax.default_device``).

    with mk.device("cpu:1"):
        x = mk.constant([1.0, 2.0])     # x.device is '/job:localhost/replica:0/task:0/device:CPU:1'
        w = mk.Variable(mk.zeros(3))    # so is w's value
        y = x * 2.0                     # and the op runs there

Inside the scope, values created from Python or NumPy data (``constant``,
``convert_to_tensor``, ``zeros``, initializers, a Variable's initial value) land on that
device, and eager ops and ``mk.function`` calls whose inputs are not pinned elsewhere run
there. A value made *before* the scope stays where it is (JAX moves it when an op needs it):
``mk.Variable(t)`` of an existing Tensor ``t`` keeps ``t``'s array.

Names follow TensorFlow: ``"cpu:0"``, ``"/CPU:0"``, ``"GPU:1"``, ``"/device:GPU:1"``,
``"/job:localhost/replica:0/task:0/device:TPU:0"``, or a ``jax.Device``. As with
TensorFlow's soft placement, a device this machine lacks (``"GPU:0"`` on a CPU-only host)
falls back to the default device, with a warning that lists what exists.
"""
import contextlib
import re
import warnings

import jax

_NAME = re.compile(r"^(?:.*/)?(?:device:)?(?P<kind>[a-z_]+)(?::(?P<index>\d+))?$")
_warned = set()


def parse_device(name):
    """The ``jax.Device`` a TensorFlow-style device name means, or None when this machine has
    no such device (soft placement). Raises ValueError for a malformed name."""
    if isinstance(name, jax.Device):
        return name
    if not isinstance(name, str):
        raise TypeError(f"mk.device expects a device name such as 'cpu:0' or 'GPU:1', or a jax.Device; "
                        f"received {name!r} of type {type(name).__name__}")
    match = _NAME.match(name.strip().lower())
    if match is None:
        raise ValueError(f"mk.device: cannot read the device name {name!r}; expected e.g. 'cpu:0', '/GPU:1' or "
                         "'/job:localhost/replica:0/task:0/device:CPU:0'")
    kind, index = match.group("kind"), int(match.group("index") or 0)
    kind = {"xla_cpu": "cpu", "xla_gpu": "gpu", "cuda": "gpu", "rocm": "gpu"}.get(kind, kind)
    if kind not in ("cpu", "gpu", "tpu"):
        raise ValueError(f"mk.device: unknown device type {kind!r} in {name!r}; expected cpu, gpu or tpu")
    try:
        devices = jax.local_devices(backend=kind)
    except RuntimeError:
        devices = []
    return devices[index] if index < len(devices) else None


@contextlib.contextmanager
def device(name):
    """Places new eager values and ops on the device ``name`` (a context manager, like ``tf.device``).

    Args:
      name: ``"cpu:0"``, ``"GPU:1"``, ``"/device:TPU:0"``, ... or a ``jax.Device``. ``None`` is a
        no-op scope.

    >>> with mk.device("cpu:0"):
    ...     x = mk.constant(1.0)
    >>> x.device
    '/job:localhost/replica:0/task:0/device:CPU:0'
    """
    if name is None:
        yield
        return
    target = parse_device(name)
    if target is None:
        available = ", ".join(str(d) for d in jax.local_devices())
        if name not in _warned:
            _warned.add(name)
            warnings.warn(f"mk.device({name!r}): this machine has no such device (it has {available}); values stay "
                          "on the default device, as TensorFlow's soft placement does", stacklevel=3)
        yield
        return
    with jax.default_device(target):
        yield

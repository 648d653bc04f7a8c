"""``DTypePolicy``: a layer's compute dtype and variable dtype, as Keras 3 names them.

A policy is named by a float dtype (``"float32"``: both dtypes the same) or by
``"mixed_float16"`` / ``"mixed_bfloat16"`` (compute in float16 / bfloat16, variables in float32).
The global policy (``set_global_policy``) is what a layer made without a ``dtype`` gets; as in
Keras 3 it is per thread (``_context.call_state``), so a thread that sets it changes no other
thread's layers.
"""
import warnings

from minikeras import _context
from minikeras.backend import default_backend, floatx
from minikeras.dtypes import as_dtype, dtype_name, is_floating

MIXED = {"mixed_float16": ("float16", "float32"), "mixed_bfloat16": ("bfloat16", "float32")}


class DTypePolicy:
    """A dtype policy for a layer (``mk.mixed_precision.Policy``, Keras 3's ``keras.DTypePolicy``).

    Args:
      name: ``"mixed_float16"``, ``"mixed_bfloat16"`` or a dtype name such as ``"float32"``;
        None: the global policy's name.

    >>> policy = mk.mixed_precision.Policy("mixed_bfloat16")
    >>> policy.compute_dtype, policy.variable_dtype
    ('bfloat16', 'float32')
    """

    def __init__(self, name=None):
        if name is None:
            name = global_policy().name
        self._name = name
        self._compute_dtype, self._variable_dtype = _parse_name(name)
        if self._compute_dtype == "float16":
            _warn_float16_on_cpu()

    @property
    def name(self):
        """The policy's name (``"mixed_bfloat16"``, ``"float32"``, ...)."""
        return self._name

    @property
    def compute_dtype(self):
        """The dtype a layer computes in (its inputs are cast to it), as a string."""
        return self._compute_dtype

    @property
    def variable_dtype(self):
        """The dtype of a layer's variables, as a string; read inside the layer's call, they are
        cast to ``compute_dtype``."""
        return self._variable_dtype

    @property
    def quantization_mode(self):
        """None: quantized policies are not supported."""
        return None

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and self._name == other._name

    def __hash__(self):
        return hash(self._name)


class FloatDTypePolicy(DTypePolicy):
    """Keras 3's alias of ``DTypePolicy``."""


def _parse_name(name):
    if not isinstance(name, str):
        raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: name={name!r} "
                        f"(of type {type(name)})")
    if name in MIXED:
        return MIXED[name]
    try:
        dtype = as_dtype(name)
    except TypeError:
        dtype = None
    if dtype is None:
        raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies include "
                         "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as 'float32'.")
    return dtype_name(dtype), dtype_name(dtype)


def serialize(policy):
    """``{'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': ...}, ...}``, as Keras 3 writes it."""
    return {"module": "keras", "class_name": "DTypePolicy", "config": policy.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """The policy of ``serialize``'s dict (``class_name`` DTypePolicy or FloatDTypePolicy)."""
    class_name = config.get("class_name") if isinstance(config, dict) else None
    if class_name not in ("DTypePolicy", "FloatDTypePolicy"):
        raise ValueError(f"Could not interpret dtype policy config {config!r}: expected class_name 'DTypePolicy' "
                         "(quantized policies are not supported)")
    return DTypePolicy(**(config.get("config") or {}))


def get(identifier):
    """A policy from None (the global one), a name, a dtype, a config dict or a policy.

    Raises:
      ValueError: for a value that names no policy.
    """
    if identifier is None:
        return global_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return DTypePolicy(identifier)
    try:
        dtype = as_dtype(identifier)
    except TypeError:
        dtype = None
    if dtype is None or dtype == object:
        raise ValueError("Cannot interpret `dtype` argument. Expected a string or an instance of DTypePolicy. "
                         f"Received: dtype={identifier!r}")
    return DTypePolicy(dtype.name)


def set_global_policy(policy):
    """Sets the policy of the layers made from now on in this thread without a ``dtype``
    (``mk.mixed_precision.set_global_policy("mixed_bfloat16")``; None: back to ``floatx()``).

    Raises:
      ValueError: for a value that is neither a policy nor a policy name, and for a policy of a
        non-floating dtype (as TF's Keras).
    """
    if policy is None:
        policy = DTypePolicy(floatx().name)
    elif isinstance(policy, str):
        policy = DTypePolicy(policy)
    elif not isinstance(policy, DTypePolicy):
        raise ValueError("Invalid `policy` argument. Expected the string name of a policy (such as "
                         f"'mixed_float16') or a `DTypePolicy` instance. Received: policy={policy!r} "
                         f"(of type {type(policy)})")
    if not is_floating(as_dtype(policy.variable_dtype)):
        raise ValueError("set_global_policy can only be used to set the global policy to floating-point policies, "
                         f"such as 'float32' and 'mixed_float16', but got policy: {policy.name}")
    _context.call_state.dtype_policy = policy


def global_policy():
    """The policy of layers made in this thread without a ``dtype`` (default: ``floatx()``'s)."""
    state = _context.call_state
    if state.dtype_policy is None:
        state.dtype_policy = DTypePolicy(floatx().name)
    return state.dtype_policy


_warned_float16 = []


def _warn_float16_on_cpu():
    """One warning per process: float16 has no fast arithmetic on a CPU."""
    if _warned_float16 or default_backend() != "cpu":
        return
    _warned_float16.append(True)
    warnings.warn("The float16 compute dtype ('mixed_float16') runs on a CPU here, where float16 has no fast "
                  "arithmetic: products are computed in float32 and the casts make it slower than float32. Use "
                  "'mixed_bfloat16' on CPUs (fast with AVX512_BF16 or AMX) and 'mixed_float16' on GPUs.",
                  UserWarning, stacklevel=4)

"""``keras.distribution.distribute_tensor``: a tensor placed with a ``TensorLayout``.

Eagerly the value is copied to its layout's devices (``jax.device_put``; nothing is copied when
it is there already). Inside a compiled step (an ``mk.function`` trace, or under a recording
``GradientTape``) it is the op ``distribute_tensor``: ``jax.lax.with_sharding_constraint`` in
the program, whose gradient is the cotangent constrained to the same layout (as jax's), so the
tape differentiates through it and XLA keeps the value (and its gradient) split that way.
"""
import jax

from minikeras import _context
from minikeras.distribute.mesh import TensorLayout
from minikeras.ops.primitive import Primitive
from minikeras.symbolic import is_symbolic
from minikeras.tensor import Tensor, to_array


def _constrain(x, *, sharding):
    return jax.lax.with_sharding_constraint(x, sharding)


sharding_constraint = Primitive("distribute_tensor", _constrain)


@sharding_constraint.defgrad
def _(g, out, x, *, sharding):
    return sharding_constraint(g, sharding=sharding)


def distribute_tensor(tensor, layout):
    """``tensor`` placed as ``layout`` says (a ``TensorLayout`` with its mesh, or a
    ``jax.sharding.Sharding``); a ``KerasTensor`` (functional API) is returned as it is.

    Returns:
      A Tensor with the same values, split over the layout's devices.

    >>> layout = keras.distribution.TensorLayout(("data", None), mesh)
    >>> x = keras.distribution.distribute_tensor(np.ones((8, 3)), layout)   # 4 rows a device on a (2, 4) mesh
    """
    if is_symbolic(tensor):
        return tensor
    if isinstance(layout, TensorLayout):
        sharding = layout.backend_layout
    elif isinstance(layout, jax.sharding.Sharding):
        sharding = layout
    else:
        raise ValueError(f"distribute_tensor expects a keras.distribution.TensorLayout (or a jax.sharding.Sharding) "
                         f"as layout; received {type(layout).__name__}: {layout!r}")
    state = _context.call_state
    if state.traces or state.tapes:
        return sharding_constraint(tensor, sharding=sharding)
    value = to_array(tensor)
    if len(sharding.spec if hasattr(sharding, "spec") else ()) > value.ndim:
        raise ValueError(f"distribute_tensor: the layout {layout} has more axes than the tensor of shape "
                         f"{tuple(value.shape)}")
    current = getattr(value, "sharding", None)
    if current is not None and current.is_equivalent_to(sharding, value.ndim):
        return Tensor(value)
    # never sharing the buffers of ``value`` (a Variable's array that a compiled step may donate)
    return Tensor(jax.device_put(value, sharding, may_alias=False))


def place_outputs(outputs, sharding):
    """Each Tensor in the structure ``outputs`` constrained to ``sharding`` (a layer's output
    under a distribution whose layout map names it)."""
    return jax.tree_util.tree_map(
        lambda t: sharding_constraint(t, sharding=sharding) if isinstance(t, Tensor) else t, outputs,
        is_leaf=lambda t: isinstance(t, Tensor))

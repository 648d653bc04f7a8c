"""A mixed-precision layer's autocast scope: the float Variables read during its call come cast
to its compute dtype (Keras 3's ``AutocastScope``), so that its weights stay float32 while its
arithmetic runs in bfloat16 or float16.

``Layer.__call__`` sets a layer's scope as ``_context.call_state.autocast`` for the call and
``Variable.value()`` applies it; the cast is an op, so the gradient of a weight comes back to
its float32 value through it.
"""
from minikeras.dtypes import is_floating
from minikeras.ops.math import cast


class AutocastScope:
    """Casts float Variables to ``dtype``, except those in ``exempt`` (ids: a layer's weights
    made with ``add_weight(autocast=False)``, such as BatchNormalization's, which it reads in
    float32 itself)."""

    __slots__ = ("dtype", "exempt")

    def __init__(self, dtype, exempt=frozenset()):
        self.dtype = dtype
        self.exempt = exempt

    def dtype_of(self, variable, dtype):
        """The dtype a read of ``variable`` (held as ``dtype``) gives inside the scope."""
        return dtype if id(variable) in self.exempt or not is_floating(dtype) else self.dtype

    def maybe_cast(self, variable, tensor):
        if tensor.dtype == self.dtype or id(variable) in self.exempt or not is_floating(tensor.dtype):
            return tensor
        return cast(tensor, self.dtype)


def scope_for(layer_autocast, compute_dtype, variable_dtype, outer, exempt):
    """The scope a layer's call runs in, as Keras 3 picks it: none where nothing casts (no
    outer scope, and compute and variable dtypes equal); an empty one (casting nothing) for a
    layer with ``autocast=False`` or a non-float compute dtype inside a mixed one; else one that
    casts to ``compute_dtype``."""
    if outer is None and compute_dtype == variable_dtype:
        return None
    if not layer_autocast or not is_floating(compute_dtype):
        return AutocastScope(compute_dtype, _EVERYTHING)
    return AutocastScope(compute_dtype, exempt)


class _Everything:
    def __contains__(self, item):
        return True


_EVERYTHING = _Everything()

"""``keras.RematScope``: layers created inside it recompute their activations in the backward
pass instead of keeping them (gradient checkpointing), as Keras 3's.

    with keras.RematScope(mode="larger_than", output_size_threshold=2048):
        conv = keras.layers.Conv2D(64, 3)      # rematerialized where its output is larger
    x = conv(images)

The scope is read when a layer is created (it decides for the layer's calls from then on);
nested scopes: the innermost applies. The recomputation is ``mk.recompute_grad``'s: the same
values and gradients, less memory kept between the forward and the backward pass.
"""
import collections
import functools
import math

from minikeras import _context
from minikeras.tape.recompute import recompute_grad

MODES = ("full", "activations", "larger_than", "list_of_layers", None)
RematMode = collections.namedtuple("RematMode", ["mode", "output_size_threshold", "layer_names"])


class RematScope:
    """Rematerialization for the layers created in its ``with`` block.

    Args:
      mode: 'full' (every layer's call), 'activations' (the ``activation`` of layers that have
        one), 'larger_than' (layers whose output has more than ``output_size_threshold``
        elements, the batch size not counted where unknown), 'list_of_layers' (the layers named
        in ``layer_names``), or None (none, inside an outer scope).
      output_size_threshold: for 'larger_than' (1024).
      layer_names: for 'list_of_layers'.
    """

    def __init__(self, mode="full", output_size_threshold=1024, layer_names=None):
        if mode not in MODES:
            raise ValueError(f"Invalid mode '{mode}'. Supported modes are: 'full', 'activations', 'larger_than', "
                             "'list_of_layers', or  None.")
        self.mode = mode
        self.output_size_threshold = output_size_threshold
        self.layer_names = list(layer_names or [])

    def __enter__(self):
        _context.call_state.remat_scopes.append(self)
        return self

    def __exit__(self, *exc):
        _context.call_state.remat_scopes.pop()
        return False


def current_remat_mode():
    """The innermost scope's ``RematMode`` in this thread, or None outside every scope."""
    scopes = _context.call_state.remat_scopes
    if not scopes:
        return None
    scope = scopes[-1]
    return RematMode(scope.mode, scope.output_size_threshold, scope.layer_names)


def _output_size(layer, inputs):
    """The element count of ``layer``'s output for ``inputs`` (None where it cannot say)."""
    try:
        shape = layer.compute_output_shape(tuple(inputs.shape))
    except Exception:  # noqa: BLE001 - a layer without a shape rule is not rematerialized by size
        return None
    if not isinstance(shape, tuple) or not all(d is None or isinstance(d, int) for d in shape):
        return None
    return math.prod(d or 1 for d in shape)


def rematerialized(layer, call, inputs):
    """``call`` (the layer's call) as the layer's remat mode wants it for ``inputs``."""
    remat = vars(layer).get("remat_mode")
    if remat is None or remat.mode is None:
        return call
    if remat.mode == "full" or (remat.mode == "list_of_layers" and layer.name in remat.layer_names):
        return recompute_grad(call)
    if remat.mode == "larger_than":
        size = _output_size(layer, inputs)
        return recompute_grad(call) if size and size > remat.output_size_threshold else call
    if remat.mode == "activations" and getattr(layer, "activation", None) is not None:
        @functools.wraps(call)
        def with_remat_activation(*args, **kwargs):
            original = layer.activation
            layer.activation = recompute_grad(original)
            try:
                return call(*args, **kwargs)
            finally:
                layer.activation = original
        return with_remat_activation
    return call

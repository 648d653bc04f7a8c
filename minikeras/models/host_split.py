"""A model cut once after its leading host layers: the two parts ``Model.host_split()`` returns.

Strings cannot enter a compiled program, so the layers that compute on the host
(``runs_on_host``: ``TextVectorization``, ``StringLookup``, ``IntegerLookup``, ``Hashing``...)
run before the compiled steps of fit, evaluate and predict. A model that can be cut after them
returns ``(host_fn, device_model)``: ``host_fn`` maps raw inputs to NumPy arrays on the host
(the trainer maps it over the data), and ``device_model`` is a ``models.model.DevicePart``, a model made of
the remaining layers (the same layer objects, so the same weights) that the compiled steps
call. ``model(x)`` itself always runs every layer.

Where the cut is found:

- a ``Sequential``: its leading host layers;
- a functional model: the host layers that read its Inputs (or other such layers' outputs),
  and the leading host layers of a ``Sequential`` called on them (``model.host_split()`` of
  that inner model, cut the same way);
- a subclassed model: nowhere. Its ``call`` is Python code, so no part of it can be run
  ahead on its own; a host layer reached from it inside a compiled step is refused with an
  error that says so.
"""
def leading_host_layers(layers):
    """How many of ``layers`` (in order) compute on the host before the first compiled one."""
    count = 0
    for layer in layers:
        if not getattr(layer, "runs_on_host", False):
            break
        count += 1
    return count


def run_layers(layers, x, training=None):
    """``x`` through ``layers`` in order."""
    for layer in layers:
        x = layer(x, training=training)
    return x


def as_host_values(value):
    """A host layer's output as NumPy (left as it is when it is not a Tensor)."""
    return value.numpy() if hasattr(value, "numpy") else value

"""``model.summary()``: Keras 3's table of layers, output shapes and parameter counts.

The layout is what Keras 3 prints when its output is captured (an 80-column console: line
length 76 split at 45% / 80%): cells padded by one space, long cells wrapped at spaces (and
long words folded), as rich does.
"""
import textwrap

_WIDTHS = (33, 24, 15)


def readable_memory_size(size):
    """Bytes as Keras prints them: '198.79 KB' (powers of 1024)."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _row(cells, left, sep, right):
    """One table row; a cell longer than its column wraps onto extra lines."""
    wrapped = [textwrap.wrap(str(cell), width - 2, break_on_hyphens=False) or [""]
               for cell, width in zip(cells, _WIDTHS)]
    lines = []
    for n in range(max(len(w) for w in wrapped)):
        texts = []
        for i, (parts, width) in enumerate(zip(wrapped, _WIDTHS)):
            text = parts[n] if n < len(parts) else ""
            texts.append(" " + (text.rjust(width - 2) if i == 2 else text.ljust(width - 2)) + " ")
        lines.append(left + sep.join(texts) + right)
    return "\n".join(lines)


def _rule(left, fill, sep, right):
    return left + sep.join(fill * w for w in _WIDTHS) + right


def _param_bytes(variables):
    return sum(v.size * v.dtype.itemsize for v in variables)


def format_summary(model):
    """The summary text of ``model`` (what ``summary()`` prints)."""
    lines = [f'Model: "{model.name}"',
             _rule("┏", "━", "┳", "┓"),
             _row(("Layer (type)", "Output Shape", "Param #"), "┃", "┃", "┃"),
             _rule("┡", "━", "╇", "┩")]
    layers = model.layers
    for i, layer in enumerate(layers):
        try:
            shape = str(layer.output_shape)
        except AttributeError:
            shape = "?"
        params = f"{layer.count_params():,}" if layer.built else "0 (unbuilt)"
        lines.append(_row((f"{layer.name} ({type(layer).__name__})", shape, params), "│", "│", "│"))
        if i < len(layers) - 1:
            lines.append(_rule("├", "─", "┼", "┤"))
    lines.append(_rule("└", "─", "┴", "┘"))
    trainable, non_trainable = model.trainable_weights, model.non_trainable_weights
    optimizer = getattr(model, "optimizer", None)
    slots = list(optimizer.variables) if optimizer is not None and getattr(optimizer, "built", False) else None
    groups = [("Total", trainable + non_trainable + (slots or [])), ("Trainable", trainable),
              ("Non-trainable", non_trainable)]
    if slots is not None:  # Keras 3 counts the optimizer's variables in the total too
        groups.append(("Optimizer", slots))
    for label, variables in groups:
        count = sum(v.size for v in variables)
        lines.append(f" {label} params: {count:,} ({readable_memory_size(_param_bytes(variables))})")
    return "\n".join(lines)

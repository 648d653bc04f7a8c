"""``model.summary()``: Keras 3's table of layers, output shapes and parameter counts."""

_WIDTHS = (33, 24, 15)


def readable_memory_size(size):
    """Bytes as Keras prints them: '198.79 KB' (powers of 1024)."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _row(cells, left, sep, right):
    texts = []
    for i, (cell, width) in enumerate(zip(cells, _WIDTHS)):
        inner = width - 2
        text = str(cell)
        texts.append(" " + (text.rjust(inner) if i == 2 else text.ljust(inner)) + " ")
    return left + sep.join(texts) + right


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
    total = trainable + non_trainable
    for label, variables in (("Total", total), ("Trainable", trainable), ("Non-trainable", non_trainable)):
        count = sum(v.size for v in variables)
        lines.append(f" {label} params: {count:,} ({readable_memory_size(_param_bytes(variables))})")
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and getattr(optimizer, "built", False):
        slots = [v for v in optimizer.variables]
        lines.append(f" Optimizer params: {sum(v.size for v in slots):,} "
                     f"({readable_memory_size(_param_bytes(slots))})")
    return "\n".join(lines)

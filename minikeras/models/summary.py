"""``model.summary()``: Keras 3's table of layers, output shapes and parameter counts.

The layout is what Keras 3 prints when its output is captured (an 80-column console: line
length 76 split at 45% / 80%): cells padded by one space, long cells wrapped at spaces (and
long words folded), as rich does.
"""
import textwrap

_WIDTHS = (33, 24, 15)
_CONNECTED_WIDTHS = (21, 19, 12, 19)  # with Keras's "Connected to" column (a functional graph)


def readable_memory_size(size):
    """Bytes as Keras prints them: '198.79 KB' (powers of 1024)."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _row(cells, left, sep, right, widths=_WIDTHS):
    """One table row; a cell longer than its column wraps onto extra lines."""
    wrapped = [textwrap.wrap(str(cell), width - 2, break_on_hyphens=False) or [""]
               for cell, width in zip(cells, widths)]
    lines = []
    for n in range(max(len(w) for w in wrapped)):
        texts = []
        for i, (parts, width) in enumerate(zip(wrapped, widths)):
            text = parts[n] if n < len(parts) else ""
            texts.append(" " + (text.rjust(width - 2) if i == 2 else text.ljust(width - 2)) + " ")
        lines.append(left + sep.join(texts) + right)
    return "\n".join(lines)


def _rule(left, fill, sep, right, widths=_WIDTHS):
    return left + sep.join(fill * w for w in widths) + right


def _param_bytes(variables):
    return sum(v.size * v.dtype.itemsize for v in variables)


def _graph_cells(model, operation):
    """Output shape and "Connected to" cells of one operation of a functional model."""
    nodes = model.nodes_of(operation)
    outputs = nodes[0].output_tensors if nodes else []
    shape = str(outputs[0].shape) if len(outputs) == 1 else str([t.shape for t in outputs]) if outputs else "?"
    links = [f"{t.node.operation.name}[{t.node.index}][{t._keras_history[1]}]"
             for node in nodes for t in node.input_tensors]
    return shape, ", ".join(links) or "-"


def _type_name(operation):
    name = type(operation).__name__
    if name == "OpCall":  # an op on symbolic tensors: Keras shows its class, e.g. add (Add)
        return "".join(part.capitalize() for part in operation.op.name.split("_"))
    return name


def format_summary(model):
    """The summary text of ``model`` (what ``summary()`` prints)."""
    graph = hasattr(model, "is_sequential_like") and not model.is_sequential_like()
    widths = _CONNECTED_WIDTHS if graph else _WIDTHS
    header = ("Layer (type)", "Output Shape", "Param #") + (("Connected to",) if graph else ())
    lines = [f'Model: "{model.name}"',
             _rule("┏", "━", "┳", "┓", widths),
             _row(header, "┃", "┃", "┃", widths),
             _rule("┡", "━", "╇", "┩", widths)]
    rows = model.operations if graph else model.layers
    for i, layer in enumerate(rows):
        if hasattr(model, "nodes_of"):
            shape, connected = _graph_cells(model, layer)
        else:
            try:
                shape = str(layer.output_shape)
            except AttributeError:
                shape = "?"
        counted = hasattr(layer, "count_params")
        params = f"{layer.count_params():,}" if counted and layer.built else "0" if not counted else "0 (unbuilt)"
        cells = (f"{layer.name} ({_type_name(layer)})", shape, params) + ((connected,) if graph else ())
        lines.append(_row(cells, "│", "│", "│", widths))
        if i < len(rows) - 1:
            lines.append(_rule("├", "─", "┼", "┤", widths))
    lines.append(_rule("└", "─", "┴", "┘", widths))
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

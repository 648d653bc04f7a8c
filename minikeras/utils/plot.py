"""``plot_model`` / ``model_to_dot``: a model's layers and their connections drawn with Graphviz.

Needs the optional ``pydot`` package and Graphviz's ``dot`` program (``pip install pydot`` and
e.g. ``apt install graphviz``); without them both functions raise ImportError saying so.
"""
import os

from minikeras.callbacks.progbar import in_notebook

try:
    import pydot
except ImportError:  # optional: only plot_model needs it
    pydot = None

PYDOT_MISSING = "You must install pydot (`pip install pydot`) for `plot_model` to work."
GRAPHVIZ_MISSING = ("You must install graphviz (see instructions at https://graphviz.gitlab.io/download/) for "
                    "`plot_model` to work.")


def _check(need_graphviz):
    if pydot is None:
        raise ImportError(PYDOT_MISSING)
    if need_graphviz:
        try:
            pydot.Dot.create(pydot.Dot())
        except (OSError, pydot.PydotException) as error:
            raise ImportError(f"{GRAPHVIZ_MISSING} ({error})") from None


def _label(layer, shape, show_shapes, show_dtype, show_layer_names, show_layer_activations, show_trainable):
    rows = [f"{layer.name} ({type(layer).__name__})" if show_layer_names else type(layer).__name__]
    activation = getattr(layer, "activation", None)
    if show_layer_activations and activation is not None:
        rows.append(f"Activation: {getattr(activation, '__name__', activation)}")
    if show_shapes:
        rows.append(f"Output shape: {shape}")
    if show_dtype:
        rows.append(f"Output dtype: {getattr(layer, 'dtype', '?')}")
    if show_trainable and getattr(layer, "weights", None):
        rows.append("Trainable" if layer.trainable else "Non-trainable")
    return "\n".join(rows)


def _graph(model):
    """``[(layer, output shape text)]`` and ``[(source layer, destination layer)]`` of ``model``."""
    if hasattr(model, "nodes_of") and hasattr(model, "operations"):  # a functional model
        nodes, edges = [], []
        for op in model.operations:
            found = model.nodes_of(op)
            outputs = found[0].output_tensors if found else []
            shape = str(outputs[0].shape) if len(outputs) == 1 else str([t.shape for t in outputs]) or "?"
            nodes.append((op, shape))
            edges.extend((t.node.operation, op) for node in found for t in node.input_tensors)
        return nodes, edges
    layers = list(getattr(model, "layers", ()))
    nodes = []
    for layer in layers:
        try:
            nodes.append((layer, str(layer.output_shape)))
        except AttributeError:
            nodes.append((layer, "?"))
    return nodes, list(zip(layers, layers[1:]))


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=200, subgraph=False, show_layer_activations=False, show_trainable=False,
                 **kwargs):
    """The ``pydot.Dot`` graph of ``model``: one box per layer, an edge per connection (a
    Sequential's layers in a chain, a functional model's as its graph).

    Raises:
      ImportError: pydot is not installed.
      ValueError: the model is not built.
    """
    _check(need_graphviz=False)
    if not getattr(model, "built", True):
        raise ValueError("This model has not yet been built. Build the model first by calling `build()` or by "
                         "calling the model on a batch of data.")
    dot = pydot.Dot(graph_type="digraph", rankdir=rankdir, dpi=str(dpi), concentrate=True)
    dot.set_node_defaults(shape="record", fontname="Helvetica")
    nodes, edges = _graph(model)
    for layer, shape in nodes:
        dot.add_node(pydot.Node(str(id(layer)), label=_label(
            layer, shape, show_shapes, show_dtype, show_layer_names, show_layer_activations, show_trainable)))
    for src, dst in edges:
        if not dot.get_edge(str(id(src)), str(id(dst))):
            dot.add_edge(pydot.Edge(str(id(src)), str(id(dst))))
    return dot


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=False, rankdir="TB",
               expand_nested=False, dpi=200, show_layer_activations=False, show_trainable=False, **kwargs):
    """Draws ``model`` into ``to_file`` (its extension picks the format: png, svg, pdf, dot...), as
    ``keras.utils.plot_model``; in a notebook it also returns the image to display.

    Raises:
      ImportError: pydot or Graphviz is not installed (the message says how to install them).
    """
    _check(need_graphviz=True)
    dot = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                       rankdir=rankdir, expand_nested=expand_nested, dpi=dpi,
                       show_layer_activations=show_layer_activations, show_trainable=show_trainable)
    extension = os.path.splitext(os.fspath(to_file))[1][1:] or "png"
    dot.write(os.fspath(to_file), format=extension)
    if extension != "pdf" and in_notebook():
        from IPython.display import Image  # IPython is there: in_notebook() found its kernel
        return Image(filename=os.fspath(to_file))
    return None

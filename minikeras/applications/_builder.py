"""The steps every application constructor shares, in Keras's order: check ``weights``, make or
adopt the input, put the classifier or the pooling on top, wrap the graph in a Model, load the
weights (Keras's file from its URL, or a local file).

    check_weights_argument(weights, include_top, classes)
    img_input = image_input(input_tensor, input_shape)
    ... the architecture's layers on img_input ...
    x = classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights)
    model = Model(model_inputs(input_tensor, img_input), x, name=name)
    load_weights(model, weights, file_name, url, file_hash)
"""
import os

from minikeras import layers
from minikeras.applications import imagenet_utils, weights_mirror
from minikeras.backend import image_data_format
from minikeras.symbolic import is_symbolic
from minikeras.utils.file_utils import get_file


def check_weights_argument(weights, include_top, classes):
    """Keras's two checks: ``weights`` is None, 'imagenet' or an existing file; ImageNet's
    classifier has 1000 classes."""
    if not (weights in {"imagenet", None} or (isinstance(weights, (str, os.PathLike)) and os.path.exists(weights))):
        raise ValueError("The `weights` argument should be either `None` (random initialization), 'imagenet' "
                         "(pre-training on ImageNet), or the path to the weights file to be loaded.  "
                         f"Received: weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError("If using `weights='imagenet'` with `include_top=True`, `classes` should be 1000.  "
                         f"Received classes={classes}")


def image_input(input_tensor, input_shape):
    """The graph's image input: a new Input of ``input_shape``, or ``input_tensor`` itself when it
    is a KerasTensor (anything else is refused by ``Input(tensor=...)``, as in Keras)."""
    if input_tensor is None:
        return layers.Input(shape=input_shape)
    if not is_symbolic(input_tensor):
        return layers.Input(tensor=input_tensor, shape=input_shape)
    return input_tensor


def source_inputs(tensor):
    """The Input tensors a KerasTensor was computed from (Keras's ``get_source_inputs``), in the
    order the graph first reaches them."""
    found, seen, stack = [], set(), [tensor]
    while stack:
        t = stack.pop()
        node = t.node
        if node is None or node.is_input:
            if id(t) not in seen:
                seen.add(id(t))
                found.append(t)
            continue
        stack.extend(reversed(node.input_tensors))
    return found


def model_inputs(input_tensor, img_input):
    return img_input if input_tensor is None else source_inputs(input_tensor if is_symbolic(input_tensor)
                                                                 else img_input)


def classifier_or_pooling(x, include_top, pooling, classes, classifier_activation, weights,
                          pool_name="avg_pool", max_pool_name="max_pool", head_pool_name="avg_pool",
                          dropout_rate=0.0, dense_kwargs=None):
    """ResNet/DenseNet/Inception/Xception/EfficientNet's top: global average pooling, a Dropout
    'top_dropout' where ``dropout_rate`` > 0, and a Dense 'predictions' layer (``dense_kwargs``:
    its initializers where a family sets them), or with no top the optional global pooling. A
    name of None lets the layer take its automatic name, as Keras's modules that leave it out."""
    if include_top:
        x = layers.GlobalAveragePooling2D(name=head_pool_name)(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions", **(dense_kwargs or {}))(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=pool_name)(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=max_pool_name)(x)
    return x


def load_weights(model, weights, file_name=None, url=None, file_hash=None):
    """Loads ``weights`` into ``model``: 'imagenet' downloads ``file_name`` from ``url`` into the
    cache's ``models`` folder (checked against ``file_hash`` where Keras has one; from the mirror
    ``$MINIKERAS_WEIGHTS_MIRROR`` names, if set: see ``weights_mirror``), a path loads that file,
    None leaves the initial weights."""
    if weights == "imagenet":
        path = get_file(file_name, weights_mirror.resolve(url), cache_subdir="models", file_hash=file_hash)
        model.load_weights(path)
    elif weights is not None:
        model.load_weights(weights)
    return model


def load_named_weights(model, weights, include_top, name, hashes, base_url):
    """``load_weights`` for the families whose ImageNet files are ``<name>.h5`` and
    ``<name>_notop.h5`` under ``base_url``, checked against ``hashes = (top, notop)``."""
    file_name, file_hash = None, None
    if weights == "imagenet":
        file_name, file_hash = (name + ".h5", hashes[0]) if include_top else (name + "_notop.h5", hashes[1])
    return load_weights(model, weights, file_name, base_url + (file_name or ""), file_hash)


def bn_axis():
    """The channel axis BatchNormalization normalizes over, as Keras's modules pick it."""
    return 3 if image_data_format() == "channels_last" else 1

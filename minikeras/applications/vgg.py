"""VGG16 and VGG19 (Simonyan and Zisserman, 2014), as ``keras.applications.vgg16``/``vgg19``:
the same layers, names, weight files and hashes.

    model = VGG19(include_top=False, weights="imagenet")           # neural style transfer's encoder
    features = model(vgg19.preprocess_input(images))                # 'caffe' preprocessing
"""
from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.backend import image_data_format
from minikeras.models import Model

BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/"
WEIGHTS = {  # depth: (top file, its md5, no-top file, its md5)
    16: ("vgg16_weights_tf_dim_ordering_tf_kernels.h5", "64373286793e3c8b2b4e3219cbf3544b",
         "vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5", "6d6bbae143d832006294945121d1f1fc"),
    19: ("vgg19_weights_tf_dim_ordering_tf_kernels.h5", "cbe5617147190e668d6c5d5026f83318",
         "vgg19_weights_tf_dim_ordering_tf_kernels_notop.h5", "253f8cb515780f3b799900260a226db6"),
}
CONVS_PER_BLOCK = {16: (2, 2, 3, 3, 3), 19: (2, 2, 4, 4, 4)}
FILTERS = (64, 128, 256, 512, 512)


def VGG(depth, include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
        classes=1000, classifier_activation="softmax", name=None):
    """VGG16 or VGG19 (``depth``); see ``VGG16`` for the arguments."""
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = img_input
    for block, (convs, filters) in enumerate(zip(CONVS_PER_BLOCK[depth], FILTERS), start=1):
        for conv in range(1, convs + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{conv}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name or f"vgg{depth}")
    top_file, top_hash, notop_file, notop_hash = WEIGHTS[depth]
    file_name, file_hash = (top_file, top_hash) if include_top else (notop_file, notop_hash)
    return _builder.load_weights(model, weights, file_name, f"{BASE_URL}vgg{depth}/{file_name}", file_hash)


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax", name="vgg16"):
    """The VGG16 model, as ``keras.applications.VGG16``.

    Args:
      include_top: the three fully-connected layers on top (then the input must be 224x224).
      weights: None (random initialization), 'imagenet' (Keras's weight file, downloaded once)
        or the path of a weights file.
      input_tensor: a KerasTensor to use as the image input.
      input_shape: (height, width, 3) when ``include_top`` is False (each side at least 32).
      pooling: with no top, None (the 4-D feature map), 'avg' or 'max' (global pooling).
      classes: the classifier's classes (1000 for ImageNet weights).
      classifier_activation: the top layer's activation (None or 'softmax' with pretrained weights).
      name: the model's name.

    Returns:
      A functional Model. Inputs are expected preprocessed with ``vgg16.preprocess_input``.
    """
    return VGG(16, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax", name="vgg19"):
    """The VGG19 model, as ``keras.applications.VGG19``; arguments as ``VGG16``."""
    return VGG(19, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def preprocess_input(x, data_format=None):
    """'caffe' preprocessing: RGB to BGR, minus ImageNet's mean pixel (see ``imagenet_utils``)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions

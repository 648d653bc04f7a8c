"""ConvNeXt (Liu et al., 2022, "A ConvNet for the 2020s"), as ``keras.applications.convnext``:
Tiny, Small, Base, Large and XLarge, with Keras's layer names (each prefixed with the model's
name), its nested stem and downsampling Sequentials, weight files and sha256 hashes. The model
normalizes its [0, 255] input itself (a Normalization layer first), so ``preprocess_input``
passes images through. Channels-last only, as in Keras.

    model = ConvNeXtTiny(weights="imagenet")               # images in [0, 255]
    base = ConvNeXtSmall(include_top=False, pooling="avg")
"""
import numpy as np

from minikeras import layers
from minikeras.applications import _builder, imagenet_utils
from minikeras.applications.convnext_layers import LayerScale, StochasticDepth  # noqa: F401  (Keras's module has them)
from minikeras.backend import image_data_format
from minikeras.models import Model, Sequential

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/convnext/"
WEIGHTS_HASHES = {  # weights name: (sha256 with top, sha256 without)
    "convnext_tiny": ("8ae6e78ce2933352b1ef4008e6dd2f17bc40771563877d156bc6426c7cf503ff",
                      "d547c096cabd03329d7be5562c5e14798aa39ed24b474157cef5e85ab9e49ef1"),
    "convnext_small": ("ce1277d8f1ee5a0ef0e171469089c18f5233860ceaf9b168049cb9263fd7483c",
                       "6fc8009faa2f00c1c1dfce59feea9b0745eb260a7dd11bee65c8e20843da6eab"),
    "convnext_base": ("52cbb006d3dadd03f6e095a8ca1aca47aecdd75acb4bc74bce1f5c695d0086e6",
                      "40a20c5548a5e9202f69735ecc06c990e6b7c9d2de39f0361e27baeb24cb7c45"),
    "convnext_large": ("070c5ed9ed289581e477741d3b34beffa920db8cf590899d6d2c67fba2a198a6",
                       "96f02b6f0753d4f543261bc9d09bed650f24dd6bc02ddde3066135b63d23a1cd"),
    "convnext_xlarge": ("c1f5ccab661354fc3a79a10fa99af82f0fbf10ec65cb894a3ae0815f17a889ee",
                        "de3f8a54174130e0cecdc71583354753d557fcf1f4487331558e2a16ba0cfe05"),
}
MODEL_CONFIGS = {  # variant: blocks per stage, channels per stage, default size
    "tiny": {"depths": [3, 3, 9, 3], "projection_dims": [96, 192, 384, 768], "default_size": 224},
    "small": {"depths": [3, 3, 27, 3], "projection_dims": [96, 192, 384, 768], "default_size": 224},
    "base": {"depths": [3, 3, 27, 3], "projection_dims": [128, 256, 512, 1024], "default_size": 224},
    "large": {"depths": [3, 3, 27, 3], "projection_dims": [192, 384, 768, 1536], "default_size": 224},
    "xlarge": {"depths": [3, 3, 27, 3], "projection_dims": [256, 512, 1024, 2048], "default_size": 224},
}
IMAGENET_MEAN_RGB = [0.485, 0.456, 0.406]
IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]


def ConvNeXtBlock(projection_dim, drop_path_rate=0.0, layer_scale_init_value=1e-6, name="convnext_block"):
    """A function applying one ConvNeXt block: a 7x7 depthwise convolution (a grouped Conv2D),
    LayerNormalization, Dense to 4x the channels, GELU, Dense back, the optional LayerScale and
    StochasticDepth (or a linear Activation), the input added back."""

    def apply(inputs):
        x = layers.Conv2D(projection_dim, kernel_size=7, padding="same", groups=projection_dim,
                          name=f"{name}_depthwise_conv")(inputs)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_layernorm")(x)
        x = layers.Dense(4 * projection_dim, name=f"{name}_pointwise_conv_1")(x)
        x = layers.Activation("gelu", name=f"{name}_gelu")(x)
        x = layers.Dense(projection_dim, name=f"{name}_pointwise_conv_2")(x)
        if layer_scale_init_value is not None:
            x = LayerScale(layer_scale_init_value, projection_dim, name=f"{name}_layer_scale")(x)
        if drop_path_rate:
            last = StochasticDepth(drop_path_rate, name=f"{name}_stochastic_depth")
        else:
            last = layers.Activation("linear", name=f"{name}_identity")
        return inputs + last(x)

    return apply


def _prestem(x, name):
    """ImageNet's per-channel mean and standard deviation on the [0, 255] scale (no weights)."""
    return layers.Normalization(mean=[m * 255 for m in IMAGENET_MEAN_RGB],
                                variance=[(s * 255) ** 2 for s in IMAGENET_STDDEV_RGB],
                                name=f"{name}_prestem_normalization")(x)


def _downsampling_layers(projection_dims, name):
    """The stem (4x4 stride-4 patches) and the three 2x2 stride-2 downsamplings, each a
    Sequential as in Keras (one layer of the model, its weights those of its two layers)."""
    stem = Sequential([layers.Conv2D(projection_dims[0], kernel_size=4, strides=4, name=f"{name}_stem_conv"),
                       layers.LayerNormalization(epsilon=1e-6, name=f"{name}_stem_layernorm")],
                      name=f"{name}_stem")
    return [stem] + [
        Sequential([layers.LayerNormalization(epsilon=1e-6, name=f"{name}_downsampling_layernorm_{i}"),
                    layers.Conv2D(projection_dims[i + 1], kernel_size=2, strides=2,
                                  name=f"{name}_downsampling_conv_{i}")],
                   name=f"{name}_downsampling_block_{i}")
        for i in range(3)]


def _check_imagenet_configuration(depths, projection_dims, name, weights_name):
    expected = MODEL_CONFIGS[weights_name.split("convnext_")[-1]]
    if list(depths) != expected["depths"] or list(projection_dims) != expected["projection_dims"]:
        raise ValueError(f"Architecture configuration does not match {weights_name} variant. When using pre-trained "
                         "weights, the model architecture must match the pre-trained configuration exactly. "
                         f"Expected depths: {expected['depths']}, got: {depths}. Expected projection_dims: "
                         f"{expected['projection_dims']}, got: {projection_dims}.")
    if weights_name not in name:
        raise ValueError(f'Model name "{name}" does not match weights variant "{weights_name}". When using imagenet '
                         'weights, model name must contain the weights variant (e.g., "convnext_'
                         f'{weights_name.split("convnext_")[-1]}").')


def ConvNeXt(depths, projection_dims, drop_path_rate=0.0, layer_scale_init_value=1e-6, default_size=224,
             name="convnext", include_preprocessing=True, include_top=True, weights=None, input_tensor=None,
             input_shape=None, pooling=None, classes=1000, classifier_activation="softmax", weights_name=None):
    """A ConvNeXt of four stages of ``depths[i]`` blocks with ``projection_dims[i]`` channels.
    ``drop_path_rate`` is the last block's stochastic-depth rate (the rates grow linearly from 0
    over the blocks); ``layer_scale_init_value`` None leaves LayerScale out. Without the top,
    the optional global pooling is followed by a LayerNormalization, as in Keras. See
    ``ConvNeXtTiny`` for the other arguments."""
    if image_data_format() == "channels_first":
        raise ValueError("ConvNeXt does not support the `channels_first` image data format. Switch to `channels_last` "
                         "by editing your local config file at ~/.keras/keras.json")
    _builder.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=image_data_format(), require_flatten=include_top,
                                                    weights=weights)
    if weights == "imagenet":  # before building, unlike Keras: a mismatch is known without the layers
        _check_imagenet_configuration(depths, projection_dims, name, weights_name)
    img_input = _builder.image_input(input_tensor, input_shape)
    x = img_input
    if include_preprocessing and input_shape[2] == 3:
        x = _prestem(x, name)
    depth_drop_rates = [float(rate) for rate in np.linspace(0.0, drop_path_rate, sum(depths))]
    first = 0
    for i, downsampling in enumerate(_downsampling_layers(projection_dims, name)):
        x = downsampling(x)
        for j in range(depths[i]):
            x = ConvNeXtBlock(projection_dims[i], drop_path_rate=depth_drop_rates[first + j],
                              layer_scale_init_value=layer_scale_init_value, name=f"{name}_stage_{i}_block_{j}")(x)
        first += depths[i]
    if include_top:
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_head_layernorm")(x)
        x = layers.Dense(classes, activation=classifier_activation, name=f"{name}_head_dense")(x)
    else:
        if pooling == "avg":
            x = layers.GlobalAveragePooling2D()(x)
        elif pooling == "max":
            x = layers.GlobalMaxPooling2D()(x)
        x = layers.LayerNormalization(epsilon=1e-6)(x)
    model = Model(_builder.model_inputs(input_tensor, img_input), x, name=name)
    hashes = WEIGHTS_HASHES[weights_name] if weights == "imagenet" else None
    return _builder.load_named_weights(model, weights, include_top, name, hashes, BASE_WEIGHTS_PATH)


def _variant(variant, include_top, include_preprocessing, weights, input_tensor, input_shape, pooling, classes,
             classifier_activation, name):
    config = MODEL_CONFIGS[variant]
    return ConvNeXt(config["depths"], config["projection_dims"], drop_path_rate=0.0, layer_scale_init_value=1e-6,
                    default_size=config["default_size"], name=name, include_preprocessing=include_preprocessing,
                    include_top=include_top, weights=weights, input_tensor=input_tensor, input_shape=input_shape,
                    pooling=pooling, classes=classes, classifier_activation=classifier_activation,
                    weights_name=f"convnext_{variant}")


def ConvNeXtTiny(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                 input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                 name="convnext_tiny"):
    """ConvNeXtTiny, as ``keras.applications.ConvNeXtTiny`` (the other sizes take the same
    arguments).

    Args:
      include_top: the classifier on top (global pooling, LayerNormalization, Dense); then the
        input is 224x224.
      include_preprocessing: the Normalization of [0, 255] images first (ImageNet weights
        expect it; left out anyway for inputs without 3 channels).
      weights: None, 'imagenet' (Keras's weight file, downloaded once) or a weights file's path.
      input_tensor: a KerasTensor to use as the image input.
      input_shape: (height, width, channels) without the top (each side at least 32).
      pooling: without the top, None (the 4-D feature map), 'avg' or 'max'; a LayerNormalization
        follows in each case, as in Keras.
      classes, classifier_activation: the classifier's size and activation.
      name: the model's name and its layers' prefix; it also names the ImageNet weight file and,
        with ImageNet weights, must contain the variant's ('convnext_tiny').

    Returns:
      A functional Model taking images in [0, 255].
    """
    return _variant("tiny", include_top, include_preprocessing, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, name)


def ConvNeXtSmall(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                  input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                  name="convnext_small"):
    """ConvNeXtSmall (stages of 3, 3, 27, 3 blocks, 96 to 768 channels); arguments as
    ``ConvNeXtTiny``."""
    return _variant("small", include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)


def ConvNeXtBase(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                 input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                 name="convnext_base"):
    """ConvNeXtBase (3, 3, 27, 3 blocks, 128 to 1024 channels; pre-trained on ImageNet-21k, then
    1k); arguments as ``ConvNeXtTiny``."""
    return _variant("base", include_top, include_preprocessing, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, name)


def ConvNeXtLarge(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                  input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                  name="convnext_large"):
    """ConvNeXtLarge (3, 3, 27, 3 blocks, 192 to 1536 channels); arguments as ``ConvNeXtTiny``."""
    return _variant("large", include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)


def ConvNeXtXLarge(include_top=True, include_preprocessing=True, weights="imagenet", input_tensor=None,
                   input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                   name="convnext_xlarge"):
    """ConvNeXtXLarge (3, 3, 27, 3 blocks, 256 to 2048 channels); arguments as ``ConvNeXtTiny``."""
    return _variant("xlarge", include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)


def preprocess_input(x, data_format=None):
    """Returns ``x`` unchanged: ConvNeXt normalizes its input itself. Kept for the API's sake,
    as Keras keeps it."""
    return x


decode_predictions = imagenet_utils.decode_predictions

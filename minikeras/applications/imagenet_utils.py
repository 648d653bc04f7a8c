"""What every ImageNet model shares, as ``keras.applications.imagenet_utils``: the three input
conventions (``preprocess_input``), the 1000 class names (``decode_predictions``), and the
argument checks the constructors run (``obtain_input_shape``, ``correct_pad``,
``validate_activation``).

    x = preprocess_input(images, mode="caffe")   # RGB->BGR, minus the ImageNet mean pixel
    x = preprocess_input(images, mode="tf")      # [0, 255] -> [-1, 1]
    x = preprocess_input(images, mode="torch")   # [0, 1], then each channel's mean and std
"""
import json
import warnings

import numpy as np

from minikeras import activations
from minikeras.applications import weights_mirror
from minikeras.backend import floatx, image_data_format
from minikeras.ops.array import concat
from minikeras.ops.creation import convert_to_tensor
from minikeras.ops.reshape import reshape
from minikeras.utils.file_utils import get_file

CLASS_INDEX = None  # the class names, read once from Keras's imagenet_class_index.json
CLASS_INDEX_PATH = "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"
CLASS_INDEX_HASH = "c2c37ea517e94d9795004a39431a14cb"

CAFFE_MEAN_BGR = [103.939, 116.779, 123.68]
TORCH_MEAN = [0.485, 0.456, 0.406]
TORCH_STD = [0.229, 0.224, 0.225]


def preprocess_input(x, data_format=None, mode="caffe"):
    """Scales a batch of images (3-D or 4-D, 3 channels, values in [0, 255]) as the ImageNet
    weights expect.

    Args:
      x: a float NumPy array (changed in place, as Keras does; pass a copy to keep it), an
        integer array (converted to floatx first) or a tensor.
      data_format: 'channels_last' or 'channels_first'; None is ``image_data_format()``.
      mode: 'caffe' (RGB to BGR, minus the mean pixel, no scaling), 'tf' (to [-1, 1]) or
        'torch' (to [0, 1], then minus each channel's mean, divided by its std).

    Returns:
      The preprocessed array or tensor.
    """
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    if data_format is None:
        data_format = image_data_format()
    elif data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Expected data_format to be one of `channels_first` or `channels_last`. "
                         f"Received: data_format={data_format}")
    if isinstance(x, np.ndarray):
        return _preprocess_numpy(x, data_format, mode)
    return _preprocess_tensor(x, data_format, mode)


def _preprocess_numpy(x, data_format, mode):
    if not issubclass(x.dtype.type, np.floating):
        x = x.astype(floatx().name, copy=False)
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
        mean, std = TORCH_MEAN, TORCH_STD
    else:
        if data_format == "channels_first":
            x = x[::-1, ...] if x.ndim == 3 else x[:, ::-1, ...]
        else:
            x = x[..., ::-1]
        mean, std = CAFFE_MEAN_BGR, None
    for c in range(3):
        if data_format == "channels_first":
            channel = (c,) if x.ndim == 3 else (slice(None), c)
        else:
            channel = (Ellipsis, c)
        x[channel] -= mean[c]
        if std is not None:
            x[channel] /= std[c]
    return x


def _preprocess_tensor(x, data_format, mode):
    ndim = len(x.shape)
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        x = x / 255.0
        mean, std = TORCH_MEAN, TORCH_STD
    else:
        # 'RGB'->'BGR' by concatenating one-channel slices: also an op on KerasTensors
        if data_format == "channels_first":
            x = concat([x[i:i + 1] for i in (2, 1, 0)], axis=0) if ndim == 3 else \
                concat([x[:, i:i + 1] for i in (2, 1, 0)], axis=1)
        else:
            x = concat([x[..., i:i + 1] for i in (2, 1, 0)], axis=-1)
        mean, std = CAFFE_MEAN_BGR, None
    if data_format == "channels_first":
        shape = (3, 1, 1) if ndim == 3 else (1, 3) + (1,) * (ndim - 2)
    else:
        shape = (1,) * (ndim - 1) + (3,)
    x = x + reshape(convert_to_tensor(-np.array(mean), dtype=x.dtype), shape)
    if std is not None:
        std_shape = (-1, 1, 1) if data_format == "channels_first" else (3,)
        x = x / reshape(convert_to_tensor(np.array(std), dtype=x.dtype), std_shape)
    return x


def decode_predictions(preds, top=5):
    """The ``top`` classes of each row of ImageNet predictions of shape (samples, 1000).

    Returns:
      One list per sample of ``(class_name, class_description, score)``, best first. The class
      names are Keras's ``imagenet_class_index.json``, downloaded once into the cache's
      ``models`` folder.
    """
    global CLASS_INDEX
    if len(preds.shape) != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape "
                         f"(samples, 1000)). Received array with shape: {tuple(preds.shape)}")
    if CLASS_INDEX is None:
        path = get_file("imagenet_class_index.json", weights_mirror.resolve(CLASS_INDEX_PATH), cache_subdir="models",
                        file_hash=CLASS_INDEX_HASH)
        with open(path) as f:
            CLASS_INDEX = json.load(f)
    results = []
    for pred in np.asarray(preds):
        top_indices = pred.argsort()[-top:][::-1]
        result = [tuple(CLASS_INDEX[str(i)]) + (pred[i],) for i in top_indices]
        result.sort(key=lambda entry: entry[2], reverse=True)
        results.append(result)
    return results


def obtain_input_shape(input_shape, default_size, min_size, data_format, require_flatten, weights=None):
    """The model's input shape (without the batch), checked as Keras checks it: 3 channels for
    ImageNet weights, no side under ``min_size``, the default size when ``require_flatten`` (a
    classifier on top) with ImageNet weights, a static shape whenever there is a classifier."""
    channels_first = data_format == "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[0] if channels_first else input_shape[-1]
        if channels not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it was passed an input_shape "
                          f"with {channels} input channels.", stacklevel=3)
        default_shape = (channels, default_size, default_size) if channels_first \
            else (default_size, default_size, channels)
    else:
        default_shape = (3, default_size, default_size) if channels_first else (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError("When setting `include_top=True` and loading `imagenet` weights, `input_shape` should "
                             f"be {default_shape}.  Received: input_shape={input_shape}")
        return default_shape
    if input_shape:
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        channels, sides = (input_shape[0], input_shape[1:]) if channels_first else (input_shape[-1], input_shape[:2])
        if channels != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
        if any(side is not None and side < min_size for side in sides):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    elif require_flatten:
        input_shape = default_shape
    else:
        input_shape = (3, None, None) if channels_first else (None, None, 3)
    if require_flatten and None in tuple(input_shape):
        raise ValueError("If `include_top` is True, you should specify a static `input_shape`. "
                         f"Received: input_shape={input_shape}")
    return tuple(input_shape)


def correct_pad(inputs, kernel_size):
    """The ZeroPadding2D padding before a stride-2 'valid' convolution of ``kernel_size`` that
    gives TensorFlow's 'same' output (one row/column less on the top/left for even sides)."""
    first = 2 if image_data_format() == "channels_first" else 1
    size = inputs.shape[first:first + 2]
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return (correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1])


def validate_activation(classifier_activation, weights):
    """Pretrained weights take only None or softmax as the classifier's activation."""
    if weights is None:
        return
    activation = activations.get(classifier_activation)
    if activation not in {activations.get("softmax"), activations.get(None)}:
        raise ValueError("Only `None` and `softmax` activations are allowed for the `classifier_activation` argument "
                         "when using pretrained weights, with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")

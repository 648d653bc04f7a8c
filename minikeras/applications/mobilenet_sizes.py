"""The input-size rules MobileNet (v1) and MobileNetV2 share with Keras: which published
resolution an input shape picks, and the warning when ImageNet weights exist for none of them.

    size = default_size(input_shape, (96, 128, 160, 192, 224))    # 224 unless square and listed
    rows = imagenet_rows(input_shape, (96, 128, 160, 192, 224))   # the weight file's resolution
"""
import warnings

from minikeras.backend import image_data_format


def _rows_cols(shape):
    """The (rows, cols) of an image shape without the batch axis."""
    return (shape[1], shape[2]) if image_data_format() == "channels_first" else (shape[0], shape[1])


def default_size(input_shape, sizes):
    """The side ``obtain_input_shape`` defaults to: the input's side when it is square and one of
    ``sizes`` (the resolutions ImageNet weights were published for), else 224."""
    if input_shape is None:
        return 224
    rows, cols = _rows_cols(input_shape)
    return rows if rows == cols and rows in sizes else 224


def imagenet_rows(input_shape, sizes):
    """The resolution whose ImageNet weight file is loaded: the input's side, or 224 with Keras's
    warning when the input is not square or its side is not one of ``sizes``."""
    rows, cols = _rows_cols(input_shape)
    if rows != cols or rows not in sizes:
        warnings.warn(f"`input_shape` is undefined or non-square, or `rows` is not in {list(sizes)}. Weights for "
                      "input shape (224, 224) will be loaded as the default.", stacklevel=3)
        return 224
    return rows


def make_divisible(value, divisor, min_value=None):
    """``value`` rounded to the nearest multiple of ``divisor`` (at least ``min_value``, and not
    more than 10% below ``value``): the MobileNets' channel counts under a width multiplier."""
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded

"""``mk.image``: the image ops of ``tf.image`` (resizing, crops, flips, colour, random
augmentations). Images are (height, width, channels) or batches (batch, height, width,
channels); every op is differentiable in the pixels where TensorFlow's is.

    x = mk.image.resize(images, (64, 64))
    x = mk.image.stateless_random_flip_left_right(x, seed=(1, 2))
"""
from minikeras.image.color import (  # noqa: F401
    adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation, convert_image_dtype,
    grayscale_to_rgb, hsv_to_rgb, per_image_standardization, rgb_to_grayscale, rgb_to_hsv)
from minikeras.image.crop import (  # noqa: F401
    central_crop, crop_to_bounding_box, pad_to_bounding_box, resize_with_crop_or_pad)
from minikeras.image.flips import flip_left_right, flip_up_down, rot90, transpose  # noqa: F401
from minikeras.image.random_ops import (  # noqa: F401
    random_brightness, random_contrast, random_crop, random_flip_left_right, random_flip_up_down, random_hue,
    random_saturation, stateless_random_brightness, stateless_random_contrast, stateless_random_crop,
    stateless_random_flip_left_right, stateless_random_flip_up_down, stateless_random_hue,
    stateless_random_saturation)
from minikeras.image.resizing import resize  # noqa: F401


class ResizeMethod:
    """The names of ``resize``'s methods, as ``tf.image.ResizeMethod``."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"

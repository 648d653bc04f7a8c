"""Keras's image file helpers (``keras.utils.load_img`` ... and ``keras.preprocessing.image``):
Pillow images to and from NumPy arrays, and ``smart_resize``.

    image = keras.utils.load_img(path, target_size=(180, 180))
    batch = np.array([keras.utils.img_to_array(image)])     # float32 (1, 180, 180, 3)

Each follows Keras 3: the same arguments and defaults (``data_format`` None is
``keras.config.image_data_format()``, ``dtype`` None is ``floatx()``), the same Pillow modes and
resampling, and the same errors.
"""
import io
import pathlib
import warnings

import numpy as np

from minikeras.backend import floatx, standardize_data_format
from minikeras.image.codec import pillow
from minikeras.image.resizing import crop_box_to_aspect_ratio, resize
from minikeras.ops.array import transpose
from minikeras.tensor import Tensor, Variable, to_array

RESAMPLING = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A rank-3 array (one image) as a Pillow image: 'RGB', 'RGBA', 'L' (one channel), or 'I'
    (one channel with values above 255). ``scale`` maps the values' range to [0, 255]."""
    data_format = standardize_data_format(data_format)
    x = np.asarray(x, dtype=dtype or floatx())
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x = x / top
        x = x * 255
    image = pillow()
    channels = x.shape[2]
    if channels in (3, 4):
        return image.fromarray(x.astype("uint8"), "RGB" if channels == 3 else "RGBA")
    if channels == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def img_to_array(img, data_format=None, dtype=None):
    """A Pillow image (or any array-like image) as a rank-3 NumPy array of ``dtype`` (``floatx()``),
    a greyscale image with its channel axis added."""
    data_format = standardize_data_format(data_format)
    x = np.asarray(img, dtype=dtype or floatx())
    if x.ndim == 2:
        return x[None] if data_format == "channels_first" else x[:, :, None]
    if x.ndim != 3:
        raise ValueError(f"Unsupported image shape: {x.shape}")
    return x.transpose(2, 0, 1) if data_format == "channels_first" else x


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Writes the image array ``x`` to ``path`` (a file name or a file object; ``file_format``
    from the name's suffix unless given). ``kwargs`` go to Pillow's ``Image.save``."""
    data_format = standardize_data_format(data_format)
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn("The JPEG format does not support RGBA images, converting to RGB.", stacklevel=2)
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False):
    """An image file as a Pillow image in ``color_mode`` ('grayscale', 'rgb' or 'rgba'), resized
    to ``target_size`` = (height, width) with Pillow's ``interpolation`` if given (after a centred
    crop to its aspect ratio with ``keep_aspect_ratio``)."""
    image = pillow()
    if isinstance(path, io.BytesIO):
        img = image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        with open(str(pathlib.Path(path).resolve()) if isinstance(path, pathlib.Path) else path, "rb") as f:
            img = image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    modes = {"grayscale": ("L", ("L", "I;16", "I")), "rgba": ("RGBA", ("RGBA",)), "rgb": ("RGB", ("RGB",))}
    if color_mode not in modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    mode, kept = modes[color_mode]
    if img.mode not in kept:
        img = img.convert(mode)
    if target_size is None or img.size == (target_size[1], target_size[0]):
        return img
    if interpolation not in RESAMPLING:
        raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported methods are "
                         f"{', '.join(RESAMPLING)}")
    resample = getattr(image.Resampling, interpolation.upper())
    box = None
    if keep_aspect_ratio:
        width, height = img.size
        crop_height = min(height, (width * target_size[0]) // target_size[1])
        crop_width = min(width, (height * target_size[1]) // target_size[0])
        top, left = (height - crop_height) // 2, (width - crop_width) // 2
        box = [left, top, left + crop_width, top + crop_height]
    return img.resize((target_size[1], target_size[0]), resample, box=box)


def smart_resize(x, size, interpolation="bilinear", data_format="channels_last"):
    """Resizes an image (height, width, channels) or a batch to ``size`` without distorting it:
    the largest centred crop of ``size``'s aspect ratio, resized. A NumPy input gives a NumPy
    array, a Tensor a Tensor."""
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers, but got: {size}.")
    is_tensor = isinstance(x, (Tensor, Variable))
    img = Tensor(to_array(x))
    if not 3 <= img.ndim <= 4:
        raise ValueError("Expected an image array with shape `(height, width, channels)`, or `(batch_size, height, "
                         f"width, channels)`, but got input with incorrect rank, of shape {tuple(img.shape)}.")
    last = img.ndim - 1
    if data_format == "channels_first":  # the crop and resize below work on channels_last
        img = transpose(img, list(range(last - 2)) + [last - 1, last, last - 2])
    height, width = img.shape[-3], img.shape[-2]
    top, left, crop_height, crop_width = crop_box_to_aspect_ratio(height, width, *size)
    img = img[..., top:top + crop_height, left:left + crop_width, :]
    out = resize(img, size, method=interpolation)
    if data_format == "channels_first":
        out = transpose(out, list(range(last - 2)) + [last, last - 2, last - 1])
    return out if is_tensor else out.numpy()

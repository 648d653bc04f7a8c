"""Image files to arrays and back, with Pillow (the optional ``images`` extra).

Pillow is imported when first needed, so that ``import minikeras`` does not need it; without
it, decoding or encoding raises an ImportError that names the extra to install.
"""
import io

import numpy as np

from minikeras.errors import InvalidArgumentError

CHANNEL_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def pillow():
    """The ``PIL.Image`` module, or an ImportError saying how to install it."""
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError("Decoding and encoding images needs Pillow: pip install 'minikeras[images]' "
                          "(or pip install pillow)") from error
    return Image


def decode(data, channels=0, what="the image", op="DecodeImage"):
    """``data`` (the bytes of a PNG, JPEG, GIF or BMP file) as a uint8 array (height, width,
    channels): the file's own channels for ``channels=0``, else converted to 1, 3 or 4.

    Raises:
      InvalidArgumentError: the bytes are not an image Pillow reads (naming ``what``).
    """
    Image = pillow()
    if channels not in (0, 1, 3, 4):
        raise ValueError(f"channels must be 0, 1, 3 or 4, received {channels!r}")
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            mode = image.mode
            if channels:
                target = CHANNEL_MODES[channels]
            else:
                target = {"1": "L", "L": "L", "LA": "LA", "RGB": "RGB", "RGBA": "RGBA", "I;16": "I;16"}.get(mode)
                if target is None:  # palettes, CMYK, ...: decoded as TensorFlow does, to RGB(A)
                    target = "RGBA" if "transparency" in image.info or mode in ("PA", "RGBa") else "RGB"
            if mode != target:
                image = image.convert(target)
            array = np.asarray(image)
    except (OSError, ValueError, SyntaxError) as error:
        raise InvalidArgumentError(None, op, f"Could not decode {what}: {error}") from error
    return array[:, :, None] if array.ndim == 2 else array


def encode_png(array, compression=-1):
    """A uint8 (or uint16) array (height, width, channels 1-4) as the bytes of a PNG file."""
    Image = pillow()
    array = np.asarray(array)
    if array.ndim != 3 or array.shape[2] not in CHANNEL_MODES:
        raise ValueError(f"encode_png expects an image of shape (height, width, channels) with 1 to 4 channels, "
                         f"received shape {array.shape}")
    if array.dtype == np.uint16 and array.shape[2] == 1:
        height, width = array.shape[:2]  # Pillow 13's fromarray takes no mode: 16 bits as little-endian bytes
        image = Image.frombytes("I;16", (width, height), array[:, :, 0].astype("<u2").tobytes())
    elif array.dtype == np.uint8:
        image = Image.fromarray(array[:, :, 0] if array.shape[2] == 1 else array, CHANNEL_MODES[array.shape[2]])
    else:
        raise ValueError(f"encode_png expects uint8 images (or uint16 with one channel), received {array.dtype}")
    out = io.BytesIO()
    level = 6 if compression is None or compression < 0 else int(compression)
    image.save(out, format="PNG", compress_level=level)
    return out.getvalue()

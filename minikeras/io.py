"""``mk.io``: reading and writing files, and image codecs (``tf.io``'s names).

    contents = mk.io.read_file("cat.png")        # a scalar mk.string Tensor of the bytes
    image = mk.io.decode_png(contents, channels=3)  # uint8, (height, width, 3)
    mk.io.write_file("copy.png", mk.io.encode_png(image))

Decoding and encoding use Pillow (``pip install 'minikeras[images]'``). These run on the host
(strings are refused inside compiled code): in a data pipeline, in ``Dataset.map``.
"""
import numpy as np

from minikeras.errors import NotFoundError
from minikeras.image import codec
from minikeras.image.color import convert_image_dtype
from minikeras.string_tensor import StringTensor, check_eager
from minikeras.tensor import Tensor, to_array


def _path(filename, what):
    if isinstance(filename, StringTensor):
        filename = filename.numpy()
    if isinstance(filename, bytes):
        filename = filename.decode("utf-8", "surrogateescape")
    if not isinstance(filename, str):
        raise TypeError(f"mk.io.{what} expects a file name (str, bytes or a scalar string Tensor), received "
                        f"{type(filename).__name__}")
    return filename


def _bytes(contents, what):
    if isinstance(contents, StringTensor):
        contents = contents.numpy()
    if not isinstance(contents, bytes):
        raise TypeError(f"mk.io.{what} expects the file's contents as bytes or a scalar string Tensor "
                        f"(mk.io.read_file), received {type(contents).__name__}")
    return contents


def _scalar_string(data):
    array = np.empty((), dtype=object)
    array[()] = data
    return StringTensor.of_bytes(array)


def read_file(filename, name=None):
    """The contents of ``filename`` as a scalar string Tensor.

    Raises:
      NotFoundError: the file cannot be read (its name and the reason in the message).
    """
    check_eager("mk.io.read_file")
    path = _path(filename, "read_file")
    try:
        with open(path, "rb") as f:
            return _scalar_string(f.read())
    except OSError as error:
        raise NotFoundError(None, "ReadFile", f"{path}; {error.strerror} [Op:ReadFile]") from error


def write_file(filename, contents, name=None):
    """Writes ``contents`` (bytes or a scalar string Tensor) to ``filename``."""
    check_eager("mk.io.write_file")
    path = _path(filename, "write_file")
    with open(path, "wb") as f:
        f.write(_bytes(contents, "write_file"))


def _decode(contents, channels, dtype, op, what):
    check_eager(f"mk.io.{what}")
    array = codec.decode(_bytes(contents, what), int(channels or 0), op=op, what=f"the contents given to mk.io.{what}")
    if dtype is not None and np.dtype(getattr(dtype, "name", dtype)) != np.uint8:
        return convert_image_dtype(Tensor(to_array(array)), dtype)
    return Tensor(to_array(array))


def decode_png(contents, channels=0, dtype="uint8", name=None):
    """A PNG file's bytes as a uint8 image (height, width, channels); ``channels`` 0 keeps the
    file's, 1/3/4 converts (grayscale, RGB, RGBA)."""
    return _decode(contents, channels, dtype, "DecodePng", "decode_png")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """A JPEG file's bytes as a uint8 image (height, width, channels). (Pillow's decoder: values
    may differ from TensorFlow's libjpeg by a level or two.)"""
    if ratio != 1:
        raise ValueError(f"mk.io.decode_jpeg supports ratio=1 only, received ratio={ratio}")
    return _decode(contents, channels, None, "DecodeJpeg", "decode_jpeg")


def decode_image(contents, channels=None, dtype="uint8", name=None, expand_animations=True):
    """A PNG, JPEG, GIF or BMP file's bytes as an image (height, width, channels) of ``dtype``
    (floats scaled to [0, 1]); an animated GIF gives its first frame."""
    return _decode(contents, channels, dtype, "DecodeImage", "decode_image")


def encode_png(image, compression=-1, name=None):
    """A uint8 image (height, width, channels 1-4) as a scalar string Tensor of PNG bytes."""
    check_eager("mk.io.encode_png")
    array = image.numpy() if hasattr(image, "numpy") else np.asarray(image)
    return _scalar_string(codec.encode_png(array, compression))

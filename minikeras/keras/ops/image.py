"""``keras.ops.image``: Keras 3's image ops (resize, affine and perspective transforms,
``map_coordinates``, patches, crops and pads, colour conversions, blurs, edges, SSIM).

Images are ``(height, width, channels)`` or batches ``(batch, height, width, channels)``;
``data_format="channels_first"`` takes ``(channels, height, width)`` layouts. Each op is one
recorded op whose forward is what Keras 3's JAX backend computes, differentiable in the
pixels (and transforms, coordinates) wherever jax's is.

    from minikeras import keras
    small = keras.ops.image.resize(images, (64, 64))
    patches = keras.ops.image.extract_patches(images, 8)
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras.image import keras_forwards as fw
from minikeras.keras.ops.keras_op import jax_forward, keras_op
from minikeras.ops.random import next_key
from minikeras.tensor import to_array

RESIZE_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic")
FILL_MODES = {"constant", "nearest", "wrap", "mirror", "reflect"}
SCALE_AND_TRANSLATE_METHODS = {"linear", "bilinear", "trilinear", "cubic", "bicubic", "tricubic", "lanczos3",
                               "lanczos5"}


def _shape(x):
    return tuple(jnp.shape(to_array(x)))


def _dtype(x):
    return np.dtype(to_array(x).dtype)


def _data_format(data_format):
    data_format = "channels_last" if data_format is None else str(data_format).lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={data_format}")
    return data_format


def _image_rank(images, what="images"):
    shape = _shape(images)
    if len(shape) not in (3, 4):
        raise ValueError(f"Invalid {what} rank: expected rank 3 (single image) or rank 4 (batch of images). "
                         f"Received input with shape: {what}.shape={shape}")
    return shape


def _layout(images, data_format):
    """(channels_first, single): how ``on_images`` turns ``images`` into a channels-last batch."""
    return dict(channels_first=_data_format(data_format) == "channels_first", single=len(_shape(images)) == 3)


def _interpolation_order(interpolation):
    if interpolation not in fw.INTERPOLATION_ORDER:
        raise ValueError(f"Invalid value for argument `interpolation`. Expected of one "
                         f"{set(fw.INTERPOLATION_ORDER)}. Received: interpolation={interpolation}")
    return fw.INTERPOLATION_ORDER[interpolation]


def _fill_mode(fill_mode):
    if fill_mode not in FILL_MODES:
        raise ValueError(f"Invalid value for argument `fill_mode`. Expected of one {FILL_MODES}. "
                         f"Received: fill_mode={fill_mode}")
    return fill_mode


def _color(name, images, data_format, float_only):
    shape = _image_rank(images)
    channels_axis = -1 if _data_format(data_format) == "channels_last" else -3
    if float_only and not np.issubdtype(_dtype(images), np.floating):
        raise ValueError(f"Invalid images dtype: expected float dtype. Received: images.dtype={_dtype(images).name}")
    if not float_only and shape[channels_axis] not in (1, 3):
        raise ValueError("Invalid channel size: expected 3 (RGB) or 1 (Grayscale). Received input with shape: "
                         f"images.shape={shape}")
    return jax_forward(name, getattr(fw, name), images, channels_axis=channels_axis)


@keras_op("rgb_to_grayscale")
def rgb_to_grayscale(images, data_format=None):
    """RGB images to one-channel grayscale (TensorFlow's weights); the dtype is kept."""
    return _color("rgb_to_grayscale", images, data_format, float_only=False)


@keras_op("rgb_to_hsv")
def rgb_to_hsv(images, data_format=None):
    """RGB to HSV (float images in [0, 1])."""
    return _color("rgb_to_hsv", images, data_format, float_only=True)


@keras_op("hsv_to_rgb")
def hsv_to_rgb(images, data_format=None):
    """HSV to RGB (float images)."""
    return _color("hsv_to_rgb", images, data_format, float_only=True)


def _aspect_box(height, width, target_height, target_width, crop):
    """(top, left, height, width) of the crop (or, for padding, of the padded canvas's offset
    and size) that gives the target's aspect ratio, centred, as Keras computes it."""
    if crop:
        h = max(min(height, int(float(width * target_height) / target_width)), 1)
        w = max(min(width, int(float(height * target_width) / target_height)), 1)
        return int(float(height - h) / 2), int(float(width - w) / 2), h, w
    h = max(height, int(float(width * target_height) / target_width))
    w = max(width, int(float(height * target_width) / target_height))
    top, left = int(float(h - height) / 2), int(float(w - width) / 2)
    if top > 0:  # Keras pads one way only: the height if it pads the height
        return top, 0, height + 2 * top, width
    if left > 0:
        return 0, left, height, width + 2 * left
    return 0, 0, height, width


@keras_op("resize")
def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    """``images`` resized to ``size`` (height, width), optionally cropped or padded first to
    the target's aspect ratio."""
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers. Received: size={size}")
    if size[0] <= 0 or size[1] <= 0:
        raise ValueError(f"`size` must have positive height and width. Received: size={size}")
    shape = _image_rank(images)
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")
    if interpolation not in RESIZE_INTERPOLATIONS:
        raise ValueError(f"Invalid value for argument `interpolation`. Expected of one {RESIZE_INTERPOLATIONS}. "
                         f"Received: interpolation={interpolation}")
    if fill_mode != "constant":
        raise ValueError(f"Invalid value for argument `fill_mode`. Only `'constant'` is supported. Received: "
                         f"fill_mode={fill_mode}")
    layout = _layout(images, data_format)
    height, width = shape[-2:] if layout["channels_first"] else shape[-3:-1]
    size = (int(size[0]), int(size[1]))
    crop = _aspect_box(height, width, *size, crop=True) if crop_to_aspect_ratio else None
    pad = _aspect_box(height, width, *size, crop=False) if pad_to_aspect_ratio else None
    return jax_forward("resize", fw.on_images, images, inner=fw.resize, size=size, method=interpolation,
                       antialias=bool(antialias), crop=crop, pad=pad, fill_value=float(fill_value), **layout)


@keras_op("affine_transform")
def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant", fill_value=0,
                     data_format=None):
    """``images`` warped by ``transform`` (8 numbers ``[a0, a1, a2, b0, b1, b2, c0, c1]``, or a
    batch of them): output (x, y) samples the input at ``((a0 x + a1 y + a2) / k, (b0 x + b1 y +
    b2) / k)`` with ``k = c0 x + c1 y + 1``, as Keras documents it."""
    order = _interpolation_order(interpolation)
    _fill_mode(fill_mode)
    _image_rank(images)
    t_shape = _shape(transform)
    if len(t_shape) not in (1, 2):
        raise ValueError("Invalid transform rank: expected rank 1 (single transform) or rank 2 (batch of "
                         f"transforms). Received input with shape: transform.shape={t_shape}")
    return jax_forward("affine_transform", fw.on_images, images, transform, inner=fw.projective_transform, order=order,
                       fill_mode=fill_mode, fill_value=float(fill_value), **_layout(images, data_format))


@keras_op("perspective_transform")
def perspective_transform(images, start_points, end_points, interpolation="bilinear", fill_value=0,
                          data_format=None):
    """``images`` warped so that the four ``start_points`` (x, y) land on ``end_points``."""
    order = _interpolation_order(interpolation)
    _image_rank(images)
    for name, points in (("start_points", start_points), ("end_points", end_points)):
        shape = _shape(points)
        if shape[-2:] != (4, 2) or len(shape) not in (2, 3):
            raise ValueError(f"Invalid {name} shape: expected (4,2) for a single image or (N,4,2) for a batch. "
                             f"Received shape: {shape}")
    if _shape(start_points) != _shape(end_points):
        raise ValueError(f"start_points and end_points must have the same shape. Received start_points.shape="
                         f"{_shape(start_points)}, end_points.shape={_shape(end_points)}")
    return jax_forward("perspective_transform", fw.on_images, images, start_points, end_points,
                       inner=fw.perspective_transform, order=order, fill_value=float(fill_value),
                       **_layout(images, data_format))


@keras_op("map_coordinates")
def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0):
    """``inputs`` sampled at ``coordinates`` (one row of coordinates per axis of ``inputs``),
    nearest (``order=0``) or linear (``order=1``)."""
    in_shape, c_shape = _shape(inputs), _shape(coordinates)
    if c_shape[0] != len(in_shape):
        raise ValueError("First dim of `coordinates` must be the same as the rank of `inputs`. Received inputs "
                         f"with shape: {in_shape} and coordinate leading dim of {c_shape[0]}")
    if len(c_shape) < 2:
        raise ValueError(f"Invalid coordinates rank: expected at least rank 2. Received input with shape: {c_shape}")
    if fill_mode not in FILL_MODES:
        raise ValueError(f"Invalid value for argument `fill_mode`. Expected one of {FILL_MODES}. Received: "
                         f"fill_mode={fill_mode}")
    if order not in range(2):
        raise ValueError(f"Invalid value for argument `order`. Expected one of {[0, 1]}. Received: order={order}")
    return jax_forward("map_coordinates", fw.map_coordinates, inputs, coordinates, order=int(order),
                       fill_mode=fill_mode, fill_value=float(fill_value))


def _patches(name, images, size, strides, dilation_rate, padding, data_format, rank):
    data_format = _data_format(data_format)
    size = (int(size),) * rank if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    if len(size) != rank:
        raise TypeError(f"Invalid `size` argument. Expected an int or a tuple of length {rank}. Received: size={size}")
    strides = size if not strides else strides
    strides = (int(strides),) * rank if isinstance(strides, (int, np.integer)) else tuple(int(s) for s in strides)
    if len(strides) != rank:
        raise ValueError(f"Invalid `strides` argument. Got: {strides}")
    dilation = (int(dilation_rate),) * rank if isinstance(dilation_rate, (int, np.integer)) else \
        tuple(int(d) for d in dilation_rate)
    shape = _shape(images)
    if len(shape) not in (rank + 1, rank + 2):
        raise ValueError(f"keras.ops.image.{name}: expected rank {rank + 1} or {rank + 2} input (one or a batch), "
                         f"received shape {shape}")
    padding = str(padding).lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: padding={padding}")
    single = len(shape) == rank + 1
    return jax_forward(name, _batched_patches, images, single=single, size=size, strides=strides,
                       dilation=dilation, padding=padding, channels_last=data_format == "channels_last")


def _batched_patches(images, *, single, **params):
    out = fw.extract_patches(images[None] if single else images, **params)
    return out[0] if single else out


@keras_op("extract_patches")
def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """Patches of ``size`` (an int, or (height, width); a 3-tuple extracts 3-D patches) as
    channels: ``(..., rows, cols, size_h * size_w * channels)``."""
    if not isinstance(size, (int, np.integer)) and len(size) not in (2, 3):
        raise ValueError(f"Invalid `size` argument. Expected a tuple of length 2 or 3. Received: size={size} with "
                         f"length {len(size)}")
    rank = 3 if not isinstance(size, (int, np.integer)) and len(size) == 3 else 2
    return _patches("extract_patches", images, size, strides, dilation_rate, padding, data_format, rank)


@keras_op("extract_patches_3d")
def extract_patches_3d(volumes, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """3-D patches of ``volumes`` (one, or a batch) as channels."""
    return _patches("extract_patches_3d", volumes, size, strides, dilation_rate, padding, data_format, 3)


def _amounts(first, second, target, size, names):
    if [first, second, target].count(None) != 1:
        raise ValueError(f"Must specify exactly two of {', '.join(names)}. Received: {names[0]}={first}, "
                         f"{names[1]}={second}, {names[2]}={target}")
    for name, value in zip(names, (first, second, target)):
        if value is not None and value < 0:
            raise ValueError(f"{name} must be >= 0. Received: {name}={value}")
    return first, second, target


def _pad(images, *, pads):
    return jnp.pad(images, pads)


@keras_op("pad_images")
def pad_images(images, top_padding=None, left_padding=None, bottom_padding=None, right_padding=None,
               target_height=None, target_width=None, data_format=None):
    """``images`` padded with zeros: two of (top, bottom, target height) and two of (left,
    right, target width)."""
    shape = _image_rank(images)
    channels_last = _data_format(data_format) == "channels_last"
    height, width = shape[-3:-1] if channels_last else shape[-2:]
    top, bottom, target_height = _amounts(top_padding, bottom_padding, target_height, height,
                                          ("top_padding", "bottom_padding", "target_height"))
    left, right, target_width = _amounts(left_padding, right_padding, target_width, width,
                                         ("left_padding", "right_padding", "target_width"))
    top = target_height - bottom - height if top is None else top
    bottom = target_height - top - height if bottom is None else bottom
    left = target_width - right - width if left is None else left
    right = target_width - left - width if right is None else right
    for name, value in (("top_padding", top), ("left_padding", left), ("right_padding", right),
                        ("bottom_padding", bottom)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0. Received: {name}={value}")
    pads = [(top, bottom), (left, right)]
    pads = pads + [(0, 0)] if channels_last else [(0, 0)] + pads
    if len(shape) == 4:
        pads = [(0, 0)] + pads
    return jax_forward("pad_images", _pad, images, pads=tuple(pads))


def _crop(images, *, start, sizes):
    return jax.lax.slice(images, start, tuple(s + n for s, n in zip(start, sizes)))


@keras_op("crop_images")
def crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None, right_cropping=None,
                target_height=None, target_width=None, data_format=None):
    """``images`` cropped: two of (top, bottom, target height) and two of (left, right,
    target width)."""
    shape = _image_rank(images)
    channels_last = _data_format(data_format) == "channels_last"
    height, width = shape[-3:-1] if channels_last else shape[-2:]
    channels = shape[-1] if channels_last else shape[-3]
    top, bottom, target_height = _amounts(top_cropping, bottom_cropping, target_height, height,
                                          ("top_cropping", "bottom_cropping", "target_height"))
    left, right, target_width = _amounts(left_cropping, right_cropping, target_width, width,
                                         ("left_cropping", "right_cropping", "target_width"))
    top = height - target_height - bottom if top is None else top
    target_height = height - bottom - top if target_height is None else target_height
    left = width - target_width - right if left is None else left
    target_width = width - right - left if target_width is None else target_width
    for name, value in (("top_cropping", top), ("target_height", target_height), ("left_cropping", left),
                        ("target_width", target_width)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0. Received: {name}={value}")
    if top + target_height > height or left + target_width > width:
        raise ValueError(f"keras.ops.image.crop_images: the crop (top {top}, left {left}, height {target_height}, "
                         f"width {target_width}) does not fit images of shape {shape}")
    start, sizes = [top, left], [target_height, target_width]
    start, sizes = (start + [0], sizes + [channels]) if channels_last else ([0] + start, [channels] + sizes)
    if len(shape) == 4:
        start, sizes = [0] + start, [shape[0]] + sizes
    return jax_forward("crop_images", _crop, images, start=tuple(start), sizes=tuple(sizes))


@keras_op("gaussian_blur")
def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    """``images`` convolved per channel with a Gaussian of ``kernel_size`` and ``sigma``
    ((x, y) pairs), zero-padded to the same size."""
    _image_rank(images)
    kernel_size = tuple(int(k) for k in kernel_size)
    sigma = jnp.asarray(to_array(sigma), _dtype(images))
    return jax_forward("gaussian_blur", fw.on_images, images, sigma, inner=fw.gaussian_blur, kernel_size=kernel_size,
                       **_layout(images, data_format))


def _key_data(seed):
    if seed is None:
        return jax.random.key_data(next_key())
    if isinstance(seed, (int, np.integer)):
        return jnp.asarray([int(seed) & 0xFFFFFFFF, 0], jnp.uint32)
    if hasattr(seed, "next"):
        key = to_array(seed.next())
        return jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    raise ValueError("Argument `seed` must be either an integer or an instance of `SeedGenerator`. Received: "
                     f"seed={seed} (of type {type(seed)})")


@keras_op("elastic_transform")
def elastic_transform(images, alpha=20.0, sigma=5.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                      seed=None, data_format=None):
    """``images`` displaced by a smooth random field (normal noise blurred with ``sigma``,
    scaled by ``alpha``); ``seed`` an int gives Keras 3's field on JAX."""
    order = _interpolation_order(interpolation)
    _fill_mode(fill_mode)
    _image_rank(images)
    return jax_forward("elastic_transform", fw.on_images, images, _key_data(seed), inner=_elastic,
                       alpha=float(alpha), sigma=float(sigma), order=order, fill_mode=fill_mode,
                       fill_value=float(fill_value), **_layout(images, data_format))


def _elastic(images, key, **params):
    return fw.elastic_transform(images, key, **params)


@keras_op("scale_and_translate")
def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method, antialias=True):
    """``jax.image.scale_and_translate``: resample ``spatial_dims`` of ``images`` to
    ``output_shape`` with the given ``scale`` and ``translation``."""
    if method not in SCALE_AND_TRANSLATE_METHODS:
        raise ValueError(f"Invalid value for argument `method`. Expected of one {SCALE_AND_TRANSLATE_METHODS}. "
                         f"Received: method={method}")
    return jax_forward("scale_and_translate", fw.scale_and_translate, images, scale, translation,
                       output_shape=tuple(int(s) for s in output_shape),
                       spatial_dims=tuple(int(d) for d in spatial_dims), method=method, antialias=bool(antialias))


def _sobel(images, *, channels_first):
    if channels_first:
        images = jnp.moveaxis(images, 1, -1)
    out = fw.sobel_edges(images)
    return jnp.moveaxis(out, 3, 1) if channels_first else out


@keras_op("sobel_edges")
def sobel_edges(images, data_format=None):
    """Sobel gradients of a batch of images: ``(..., 2)`` holding (dy, dx) per pixel and channel."""
    shape = _shape(images)
    if len(shape) != 4:
        raise ValueError(f"keras.ops.image.sobel_edges expects a batch of images (rank 4), received shape {shape}")
    return jax_forward("sobel_edges", _sobel, images, channels_first=_data_format(data_format) == "channels_first")


def _ssim(image1, image2, *, single, channels_first, **params):
    if single:
        image1, image2 = image1[None], image2[None]
    if channels_first:
        image1, image2 = jnp.moveaxis(image1, 1, -1), jnp.moveaxis(image2, 1, -1)
    out = fw.ssim(image1, image2, **params)
    return out[0] if single else out


@keras_op("ssim")
def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, data_format=None):
    """The structural similarity of ``image1`` and ``image2`` (per image, averaged over channels)."""
    _image_rank(image1, "image1")
    _image_rank(image2, "image2")
    if _shape(image1) != _shape(image2):
        raise ValueError(f"keras.ops.image.ssim: image1 and image2 must have the same shape, received "
                         f"{_shape(image1)} and {_shape(image2)}")
    layout = _layout(image1, data_format)
    return jax_forward("ssim", _ssim, image1, image2, max_val=float(max_val), filter_size=int(filter_size),
                       filter_sigma=float(filter_sigma), k1=float(k1), k2=float(k2), **layout)


__all__ = ["affine_transform", "crop_images", "elastic_transform", "extract_patches", "extract_patches_3d",
    "gaussian_blur", "hsv_to_rgb", "map_coordinates", "pad_images", "perspective_transform", "resize",
    "rgb_to_grayscale", "rgb_to_hsv", "scale_and_translate", "sobel_edges", "ssim"]

"""The jax forwards of ``keras.ops.image`` (what Keras 3's JAX backend computes): pure functions
of arrays, static parameters as keywords (``keras_op.jax_forward`` records each as one op; the
augmentation layers call them through ``ops.jax_call``). Images are batches; the public
functions add and remove the batch axis of a single image and move channels first to last."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy import ndimage

from minikeras.xla_cpu import depthwise

INTERPOLATION_ORDER = {"nearest": 0, "bilinear": 1}


def rgb_to_grayscale(images, *, channels_axis):
    if images.shape[channels_axis] == 1:
        return images
    dtype = images.dtype
    images = images.astype(jnp.result_type(dtype, float))
    weights = jnp.asarray([0.2989, 0.5870, 0.1140], images.dtype)
    return jnp.expand_dims(jnp.tensordot(images, weights, axes=(channels_axis, -1)), channels_axis).astype(dtype)


def rgb_to_hsv(images, *, channels_axis):
    eps = jnp.finfo(images.dtype).eps
    images = jnp.where(jnp.abs(images) < eps, 0.0, images)
    r, g, b = (jnp.squeeze(c, channels_axis) for c in jnp.split(images, 3, channels_axis))
    value = jnp.maximum(jnp.maximum(r, g), b)
    range_ = value - jnp.minimum(jnp.minimum(r, g), b)
    safe_value = jnp.where(value > 0, value, 1.0)
    safe_range = jnp.where(range_ > 0, range_, 1.0)
    saturation = jnp.where(value > 0, range_ / safe_value, 0.0)
    scale = 1.0 / (6.0 * safe_range)
    hue = jnp.where(value == g, scale * (b - r) + 2.0 / 6.0, scale * (r - g) + 4.0 / 6.0)
    hue = jnp.where(value == r, scale * (g - b), hue)
    hue = jnp.where(range_ > 0, hue, 0.0) + (hue < 0.0).astype(hue.dtype)
    return jnp.stack([hue, saturation, value], axis=channels_axis)


def hsv_to_rgb(images, *, channels_axis):
    h, s, v = (jnp.squeeze(c, channels_axis) for c in jnp.split(images, 3, channels_axis))
    dh = jnp.mod(h, 1.0) * 6.0
    dr = jnp.clip(jnp.abs(dh - 3.0) - 1.0, 0.0, 1.0)
    dg = jnp.clip(2.0 - jnp.abs(dh - 2.0), 0.0, 1.0)
    db = jnp.clip(2.0 - jnp.abs(dh - 4.0), 0.0, 1.0)
    rest = 1.0 - s
    return jnp.stack([v * (rest + s * dr), v * (rest + s * dg), v * (rest + s * db)], axis=channels_axis)


def resize(images, *, size, method, antialias, crop, pad, fill_value):
    """``images`` (batch, height, width, channels) cropped or padded to the target's aspect
    ratio (``crop``/``pad``: (top, left, height, width) of the box), then resized."""
    if crop is not None:
        top, left, height, width = crop
        images = images[:, top:top + height, left:left + width, :]
    if pad is not None:
        top, left, height, width = pad
        filled = jnp.full((images.shape[0], height, width, images.shape[3]), fill_value, images.dtype)
        images = lax.dynamic_update_slice(filled, images, (0, top, left, 0))
    shape = (images.shape[0],) + tuple(size) + (images.shape[3],)
    return jax.image.resize(images, shape, method=method, antialias=antialias)


def _sample(image, coordinates, order, fill_mode, fill_value):
    """``image`` (height, width, channels) sampled at ``coordinates`` (2, ...), per channel."""
    per_channel = jax.vmap(lambda c: ndimage.map_coordinates(c, list(coordinates), order=order, mode=fill_mode,
                                                             cval=fill_value), in_axes=-1, out_axes=-1)
    return per_channel(image)


def _grid(height, width, dtype):
    return jnp.meshgrid(jnp.arange(height, dtype=dtype), jnp.arange(width, dtype=dtype), indexing="ij")


def projective_transform(images, transform, *, order, fill_mode, fill_value):
    """Output pixel (y, x) samples the input at ``((t3 x + t4 y + t5) / k, (t0 x + t1 y + t2) / k)``
    with ``k = t6 x + t7 y + 1`` (Keras's documented 8-number transforms; one for all images or
    one per image), outside the image as ``fill_mode`` says."""
    batch, height, width, _ = images.shape
    transform = jnp.broadcast_to(transform, (batch, 8))
    y, x = _grid(height, width, transform.dtype)

    def one(image, t):
        k = t[6] * x + t[7] * y + 1.0
        coordinates = jnp.stack([(t[3] * x + t[4] * y + t[5]) / k, (t[0] * x + t[1] * y + t[2]) / k])
        return _sample(image, coordinates, order, fill_mode, fill_value)

    return jax.vmap(one)(images, transform)


def homography(start, end):
    """The 8 transform numbers mapping ``end`` corners to ``start`` corners (Keras's
    ``compute_homography_matrix``; RandomPerspective's boxes use it too)."""
    sx, sy, ex, ey = start[..., 0], start[..., 1], end[..., 0], end[..., 1]
    zeros, ones = jnp.zeros_like(ex), jnp.ones_like(ex)
    x_rows = jnp.stack([ex, ey, ones, zeros, zeros, zeros, -sx * ex, -sx * ey], axis=-1)
    y_rows = jnp.stack([zeros, zeros, zeros, ex, ey, ones, -sy * ex, -sy * ey], axis=-1)
    matrix = jnp.concatenate([x_rows, y_rows], axis=1)
    target = jnp.concatenate([sx, sy], axis=-1)[..., None]
    return jnp.linalg.solve(matrix, target)[..., 0]


def perspective_transform(images, start_points, end_points, *, order, fill_value):
    batch = images.shape[0]
    start_points = jnp.broadcast_to(start_points, (batch, 4, 2)).astype(jnp.float32)
    end_points = jnp.broadcast_to(end_points, (batch, 4, 2)).astype(jnp.float32)
    transform = homography(start_points, end_points)
    return projective_transform(images, transform, order=order, fill_mode="constant", fill_value=fill_value)


def map_coordinates(inputs, coordinates, *, order, fill_mode, fill_value):
    return ndimage.map_coordinates(inputs, list(coordinates), order, fill_mode, fill_value)


def gaussian_kernel(kernel_size, sigma, dtype):
    def one_d(size, s):
        x = jnp.arange(size, dtype=dtype) - jnp.array((size - 1) / 2, dtype=dtype)
        k = jnp.exp(-0.5 * (x / s) ** 2)
        return k / jnp.sum(k)
    return jnp.outer(one_d(kernel_size[1], sigma[1]), one_d(kernel_size[0], sigma[0]))


def _depthwise_same(images, kernel):
    """``kernel`` (kh, kw) applied to each channel of (batch, height, width, channels), "same"."""
    kernel = jnp.broadcast_to(kernel[:, :, None, None], kernel.shape + (images.shape[-1], 1))
    return depthwise.depthwise_forward(images, kernel.astype(images.dtype), (1, 1), "SAME", (1, 1))


def gaussian_blur(images, sigma, *, kernel_size):
    return _depthwise_same(images, gaussian_kernel(kernel_size, sigma.astype(images.dtype), images.dtype))


def elastic_transform(images, key, *, alpha, sigma, order, fill_mode, fill_value):
    """Keras 3's elastic transform: one normal field drawn from ``key`` displaces both axes
    (Keras draws dx and dy from the same seed), blurred, scaled by ``alpha``."""
    batch, height, width, channels = images.shape
    dtype = images.dtype
    kernel_size = (int(6 * sigma) | 1,) * 2
    noise = jax.random.normal(key, (batch, height, width), dtype=dtype) * sigma
    blurred = gaussian_blur(noise[..., None], jnp.asarray([sigma, sigma], dtype), kernel_size=kernel_size)[..., 0]
    y, x = jnp.meshgrid(jnp.arange(height), jnp.arange(width), indexing="ij")
    coordinates = jnp.stack([y + alpha * blurred, x + alpha * blurred], axis=1)
    out = jax.vmap(lambda image, c: _sample(image, c, order, fill_mode, fill_value))(images, coordinates)
    return out.astype(dtype)


def scale_and_translate(images, scale, translation, *, output_shape, spatial_dims, method, antialias):
    return jax.image.scale_and_translate(images, output_shape, spatial_dims, scale, translation, method, antialias)


def sobel_edges(images):
    sobel_x = jnp.asarray([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], images.dtype)
    return jnp.stack([_depthwise_same(images, sobel_x.T), _depthwise_same(images, sobel_x)], axis=-1)


def extract_patches(images, *, size, strides, dilation, padding, channels_last):
    """Each patch's pixels as channels: a convolution with the identity kernel."""
    channels = images.shape[-1] if channels_last else images.shape[1]
    depth = channels
    for s in size:
        depth *= s
    kernel = jnp.eye(depth, dtype=images.dtype).reshape(tuple(size) + (channels, depth))
    rank = len(size)
    n = rank + 2
    spec = (0, n - 1) + tuple(range(1, n - 1)) if channels_last else (0, 1) + tuple(range(2, n))
    numbers = lax.ConvDimensionNumbers(lhs_spec=spec, rhs_spec=(n - 1, n - 2) + tuple(range(n - 2)), out_spec=spec)
    return lax.conv_general_dilated(images, kernel, strides, padding.upper(), rhs_dilation=dilation,
                                    dimension_numbers=numbers)


def ssim(image1, image2, *, max_val, filter_size, filter_sigma, k1, k2):
    """Mean SSIM per image of (batch, height, width, channels) images ("valid" windows)."""
    dtype = image1.dtype
    compute = jnp.result_type(dtype, float)
    a, b = image1.astype(compute), image2.astype(compute)
    x = jnp.arange(filter_size, dtype=compute) - (filter_size - 1) / 2.0
    g = jnp.exp(-(x ** 2) / (2.0 * filter_sigma ** 2))
    g = g / jnp.sum(g)
    kernel = jnp.outer(g, g)[:, :, None, None]

    def blur(v):
        flat = jnp.transpose(v, (0, 3, 1, 2)).reshape(-1, v.shape[1], v.shape[2], 1)
        return lax.conv_general_dilated(flat, kernel, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mu1, mu2 = blur(a), blur(b)
    s11 = blur(a * a) - mu1 * mu1
    s22 = blur(b * b) - mu2 * mu2
    s12 = blur(a * b) - mu1 * mu2
    ssim_map = (2.0 * mu1 * mu2 + c1) * (2.0 * s12 + c2) / ((mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2))
    per_channel = jnp.mean(ssim_map, axis=(1, 2, 3)).reshape(a.shape[0], a.shape[3])
    return jnp.mean(per_channel, axis=-1).astype(dtype)


def on_images(images, *rest, inner, channels_first, single, **params):
    """``inner`` on a batch of channels-last images: a single image gains (and loses) a batch
    axis, channels-first images are moved to channels last and back."""
    if single:
        images = images[None]
    if channels_first:
        images = jnp.moveaxis(images, 1, -1)
    out = inner(images, *rest, **params)
    if channels_first:
        out = jnp.moveaxis(out, -1, 1)
    return out[0] if single else out

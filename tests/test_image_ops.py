"""mk.image: values against tf.image (tests/fixtures/images, made by real TensorFlow),
gradients against jax, the random and stateless_random variants."""
import jax
import numpy as np
import pytest
from conftest import check_grad

import minikeras as mk

F = np.load(__import__("os").path.join(__import__("os").path.dirname(__file__), "fixtures", "images", "image_ops.npz"))
X, XU, IMAGE = F["images"], F["images_u8"], F["image"]
I = mk.image


def close(key, got, atol=2e-4):
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    assert got.dtype == F[key].dtype, key
    np.testing.assert_allclose(got.astype(np.float64), F[key], rtol=1e-5, atol=atol, err_msg=key)


# the matrix methods at every size; the kernels jax.image computes (Lanczos, antialiasing) at one
RESIZE_KEYS = [k for k in F.files if k.startswith("resize/") and k.count("/") == 2 and "lanczos" not in k] + [
    "resize/lanczos3/3x4", "resize/lanczos5/8x9", "resize_aa/bilinear/3x4", "resize_aa/bicubic/5x3"]


@mk.function  # one compiled program for all of them: eagerly each op would compile on its own
def _resized(x, xu):
    out = {}
    for key in RESIZE_KEYS:
        kind, method, size = key.split("/")
        out[key] = I.resize(x, tuple(map(int, size.split("x"))), method=method, antialias=kind == "resize_aa")
    out["resize/nearest_u8"] = I.resize(xu, (5, 12), method=I.ResizeMethod.NEAREST_NEIGHBOR)
    out["resize/preserve"] = I.resize(x, (6, 6), preserve_aspect_ratio=True)
    return out


def test_resize_matches_tensorflow():
    """Every method (bilinear, nearest, bicubic, area, lanczos3/5), up and down, antialiased."""
    outputs = _resized(X, XU)
    assert len(outputs) == len(RESIZE_KEYS) + 2 == 18
    for key, value in outputs.items():
        close(key, value)
    single = I.resize(X[0], (4, 4))
    np.testing.assert_allclose(single, I.resize(X[:1], (4, 4))[0], rtol=1e-6)
    assert I.resize(XU, (4, 4)).dtype == mk.float32


@mk.function
def _tf_image(x, xu, image, gray, hsv, u8_as_i32):
    out = {"flip_left_right": I.flip_left_right(x), "flip_up_down": I.flip_up_down(x)}
    for k in range(4):
        out[f"rot90/{k}"] = I.rot90(x, k)
    out.update({
        "rgb_to_grayscale": I.rgb_to_grayscale(image), "rgb_to_grayscale_u8": I.rgb_to_grayscale(xu),
        "grayscale_to_rgb": I.grayscale_to_rgb(gray),
        "adjust_brightness": I.adjust_brightness(image, 0.1), "adjust_brightness_u8": I.adjust_brightness(xu, 0.1),
        "adjust_contrast": I.adjust_contrast(x, 1.7), "adjust_contrast_u8": I.adjust_contrast(xu, 0.6),
        "adjust_saturation/0.5": I.adjust_saturation(image, 0.5),
        "adjust_saturation/2.0": I.adjust_saturation(image, 2.0),
        "adjust_saturation_u8": I.adjust_saturation(xu, 1.5), "adjust_hue": I.adjust_hue(image, 0.2),
        "adjust_gamma": I.adjust_gamma(image, 0.5, 2.0), "rgb_to_hsv": I.rgb_to_hsv(image),
        "hsv_to_rgb": I.hsv_to_rgb(hsv), "per_image_standardization": I.per_image_standardization(x),
        "central_crop/0.5": I.central_crop(x, 0.5), "central_crop/0.33": I.central_crop(image, 0.33),
        "resize_with_crop_or_pad/3x10": I.resize_with_crop_or_pad(x, 3, 10),
        "resize_with_crop_or_pad/10x4": I.resize_with_crop_or_pad(image, 10, 4),
        "convert/u8_to_f32": I.convert_image_dtype(xu, mk.float32),
        "convert/f32_to_u8": I.convert_image_dtype(image, mk.uint8),
        "convert/f32_to_u8_sat": I.convert_image_dtype(image * 1.5 - 0.2, mk.uint8, saturate=True),
        "convert/u8_to_i32": I.convert_image_dtype(xu, mk.int32),
        "convert/i32_to_u8": I.convert_image_dtype(u8_as_i32, mk.uint8),
        "convert/u8_to_i16": I.convert_image_dtype(xu, mk.int16)})
    return out


def test_tf_image_functions_match_tensorflow():
    """flips, rot90, grayscale, HSV, adjust_*, crops and pads, convert_image_dtype."""
    outputs = _tf_image(X, XU, IMAGE, F["rgb_to_grayscale"], F["rgb_to_hsv"], F["convert/u8_to_i32"])
    for key, value in outputs.items():
        close(key, value)
    np.testing.assert_array_equal(I.rot90(X[0], 1).numpy(), F["rot90/1"][0])  # eagerly, one image


def test_resize_gradients_to_second_order():
    x = X[:1, :, :, :2] / 255.0
    check_grad(lambda t: I.resize(t, (7, 9)),
               lambda a: jax.image.resize(a, (1, 7, 9, 2), "linear", antialias=False), x)
    check_grad(lambda t: I.resize(t, (3, 4), method="lanczos3", antialias=True) * I.resize(t, (3, 4)),
               lambda a: jax.image.resize(a, (1, 3, 4, 2), "lanczos3") * jax.image.resize(
                   a, (1, 3, 4, 2), "linear", antialias=False), x)


def test_stateless_random_ops_repeat_for_a_seed():
    for fn, args in [(I.stateless_random_flip_left_right, ()), (I.stateless_random_flip_up_down, ()),
                     (I.stateless_random_brightness, (0.3,)), (I.stateless_random_contrast, (0.2, 1.8)),
                     (I.stateless_random_saturation, (0.2, 1.8)), (I.stateless_random_hue, (0.3,))]:
        first = fn(IMAGE, *args, seed=(3, 4)).numpy()
        np.testing.assert_array_equal(fn(IMAGE, *args, seed=(3, 4)).numpy(), first)
        others = [fn(IMAGE, *args, seed=(3, s)).numpy() for s in range(5, 12)]
        assert any(not np.array_equal(o, first) for o in others), fn.__name__
    crop = I.stateless_random_crop(IMAGE, (3, 4, 3), seed=(1, 2)).numpy()
    np.testing.assert_array_equal(I.stateless_random_crop(IMAGE, (3, 4, 3), seed=(1, 2)).numpy(), crop)
    assert any(np.array_equal(crop, IMAGE[i:i + 3, j:j + 4]) for i in range(3) for j in range(4))
    with pytest.raises(ValueError, match="`seed` must be a pair of integers"):
        I.stateless_random_flip_left_right(IMAGE, seed=3)


def test_random_ops_draw_per_image_and_repeat_after_set_seed():
    batch = np.broadcast_to(X[:1], (64,) + X.shape[1:])
    mk.random.set_seed(5)
    flipped = I.random_flip_left_right(batch).numpy()
    is_flipped = np.all(flipped == X[0, :, ::-1], axis=(1, 2, 3))
    assert np.all(is_flipped | np.all(flipped == X[0], axis=(1, 2, 3)))
    assert 16 < is_flipped.sum() < 48
    mk.random.set_seed(5)
    np.testing.assert_array_equal(I.random_flip_left_right(batch).numpy(), flipped)
    delta = I.random_brightness(IMAGE, 0.2).numpy() - IMAGE
    assert np.allclose(delta, delta.flat[0], atol=1e-6) and abs(delta.flat[0]) <= 0.2
    assert I.random_crop(IMAGE, (2, 2, 3)).shape == (2, 2, 3)
    with pytest.raises(ValueError, match="`upper` must be greater than `lower`"):
        I.random_contrast(IMAGE, 0.5, 0.5)


def test_bad_input_names_the_op():
    with pytest.raises(ValueError, match=r"mk.image.resize: invalid images rank: expected rank 3 .* shape: "
                                         r"images.shape=\(5, 7\)"):
        I.resize(X[0, :, :, 0], (2, 2))
    with pytest.raises(ValueError, match="Expected one of"):
        I.resize(X, (2, 2), method="cubic")
    with pytest.raises(ValueError, match="central_fraction must be within"):
        I.central_crop(X, 0.0)
    with pytest.raises(ValueError, match="3 channels"):
        I.rgb_to_grayscale(X[..., :2])

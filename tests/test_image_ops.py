"""mk.image: values against tf.image (tests/fixtures/images, made by real TensorFlow),
gradients against jax, the random and stateless_random variants."""
import os

import jax
import numpy as np
import pytest
from conftest import check_grad

import minikeras as mk
from minikeras.image.resizing import host_resize
from minikeras.image.transform import _projective_forward, affine_matrix, projective_transform

F = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "images", "image_ops.npz"))
X, XU, IMAGE = F["images"], F["images_u8"], F["image"]
I = mk.image


def close(key, got, atol=2e-4):
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    assert got.dtype == F[key].dtype, key
    np.testing.assert_allclose(got.astype(np.float64), F[key], rtol=1e-5, atol=atol, err_msg=key)


# the matrix methods (bilinear, nearest, bicubic, area) at every size on the host loader's path
# (host_resize: the same weights, NumPy, nothing to compile); the op at one size per method
OP_KEYS = ["resize/bilinear/8x9", "resize/nearest/3x4", "resize/bicubic/5x3", "resize/area/3x4",
           "resize/lanczos3/3x4", "resize/lanczos5/8x9", "resize_aa/bilinear/3x4", "resize_aa/bicubic/5x3"]


def test_resize_matches_tensorflow():
    """Every method (bilinear, nearest, bicubic, area, lanczos3/5), up and down, antialiased."""
    matrix_keys = [k for k in F.files if k.startswith("resize/") and k.count("/") == 2 and "lanczos" not in k]
    assert len(matrix_keys) == 12
    for key in matrix_keys:
        _, method, size = key.split("/")
        size = tuple(map(int, size.split("x")))
        close(key, np.stack([host_resize(image, size, method) for image in X]))
    for key in OP_KEYS:
        kind, method, size = key.split("/")
        close(key, I.resize(X, tuple(map(int, size.split("x"))), method=method, antialias=kind == "resize_aa"))
    close("resize/nearest_u8", I.resize(XU, (5, 12), method=I.ResizeMethod.NEAREST_NEIGHBOR))
    close("resize/preserve", I.resize(X, (6, 6), preserve_aspect_ratio=True))
    np.testing.assert_allclose(I.resize(X[0], (8, 9)), F["resize/bilinear/8x9"][0], rtol=1e-5, atol=2e-4)
    assert I.resize(XU, (8, 9)).dtype == mk.float32


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


def test_projective_transform_gradients_to_second_order():
    """The transform's gradient is its transpose (a fill value is its constant term)."""
    x = X[:2, :, :, :2] / 255.0
    angles = np.array([20.0, -35.0], np.float32)
    transforms = np.asarray(affine_matrix(angles, angles * 0, angles * 0 + 1.5, angles * 0 + 1.2, 5, 7))

    def ours(t):
        return projective_transform(t, transforms, "bilinear", "constant", fill_value=0.5)

    def reference(a):
        return _projective_forward(a, transforms, output_size=(5, 7), interpolation="bilinear",
                                   fill_mode="constant", fill_value=0.5)
    check_grad(lambda t: ours(t) * ours(t), lambda a: reference(a) * reference(a), x)


def test_stateless_random_ops_repeat_for_a_seed():
    # (saturation and hue draw the same way; their adjust_* are checked against TF above)
    for fn, args in [(I.stateless_random_flip_left_right, ()), (I.stateless_random_flip_up_down, ()),
                     (I.stateless_random_brightness, (0.3,)), (I.stateless_random_contrast, (0.2, 1.8))]:
        first = fn(IMAGE, *args, seed=(3, 4)).numpy()
        np.testing.assert_array_equal(fn(IMAGE, *args, seed=(3, 4)).numpy(), first)
        others = [fn(IMAGE, *args, seed=(3, s)).numpy() for s in range(5, 10)]
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

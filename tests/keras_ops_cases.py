"""The cases of tests/test_keras_ops_reference.py: each a ``keras.ops`` call on generated
inputs, run once on Keras 3 (JAX backend) by tests/fixtures/keras_ops/make_reference.py and
again on minikeras by the test.

A case is (id, op, arrays, kwargs, options): ``op`` as "module.name" (module one of core, nn,
linalg, image); ``arrays``: the array arguments, each (keyword or None for positional, shape,
dtype, kind) where kind says how it is drawn (``inputs``); ``options``: ``grad`` (compare
first-order gradients of ``sum(w * output)``, default True for float inputs), ``wrt`` (the
inputs differentiated, default all float ones), ``order2`` (also a Hessian-vector product),
``rtol``/``atol``.
"""
import numpy as np


def inputs(case_id, arrays):
    """The case's input arrays, reproducibly (a seed per case id)."""
    rng = np.random.default_rng(abs(hash_id(case_id)) % (2 ** 32))
    out = []
    for _, shape, dtype, kind in arrays:
        if kind == "normal":
            a = rng.standard_normal(shape)
        elif kind == "uniform":
            a = rng.uniform(0.05, 0.95, shape)
        elif kind == "positive":
            a = rng.uniform(0.5, 2.0, shape)
        elif kind.startswith("int:"):
            low, high = (int(v) for v in kind[4:].split(":"))
            a = rng.integers(low, high, shape)
        elif kind == "bool":
            a = rng.uniform(size=shape) > 0.3
        elif kind == "spd":  # symmetric positive definite, batched over leading axes
            m = rng.standard_normal(shape)
            a = m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])
        elif kind == "lower":
            a = np.tril(rng.standard_normal(shape)) + 3 * np.eye(shape[-1])
        elif kind == "onehot":
            a = np.eye(shape[-1])[rng.integers(0, shape[-1], shape[:-1])]
        elif kind == "affine":  # transforms without the projective part (Keras on JAX ignores it)
            a = rng.uniform(-1, 1, shape) * np.array([0.3, 0.3, 2, 0.3, 0.3, 2, 0, 0]) + \
                np.array([1, 0, 0, 0, 1, 0, 0, 0])
        elif kind == "corners":  # four image corners (x, y), moved a little
            a = np.array([[0, 0], [6, 0], [0, 5], [6, 5]]) + rng.uniform(-1, 1, shape)
        elif kind == "spread":  # values apart from each other (no ties for max, sort, eig)
            a = rng.permutation(np.prod(shape)).reshape(shape) / np.prod(shape) * 4 - 2 + \
                rng.uniform(0, 0.01, shape)
        else:
            raise ValueError(kind)
        out.append(np.asarray(a).astype(dtype))
    return out


def hash_id(text):
    value = 0
    for ch in text:
        value = (value * 131 + ord(ch)) % (2 ** 61)
    return value


F = "float32"
X = [(None, (2, 7), F, "normal")]
X3 = [(None, (2, 3, 4), F, "normal")]
IMG = [(None, (2, 6, 7, 3), F, "uniform")]
IMG_CF = [(None, (2, 3, 6, 7), F, "uniform")]

CASES = []


def case(case_id, op, arrays, kwargs=None, **options):
    CASES.append((case_id, op, arrays, kwargs or {}, options))


# ----------------------------------------------------------------------------- nn: activations
for name in ("relu", "relu6", "sigmoid", "sparse_sigmoid", "softplus", "softsign", "sparse_plus", "silu", "swish",
             "log_sigmoid", "hard_sigmoid", "hard_silu", "hard_swish", "selu", "hard_tanh", "tanh_shrink", "elu",
             "celu", "gelu", "squareplus", "leaky_relu", "hard_shrink", "soft_shrink"):
    case(f"nn_{name}", f"nn.{name}", [(None, (3, 5), F, "spread")], order2=name in ("gelu", "softplus", "silu", "elu"))
case("nn_relu_int", "nn.relu", [(None, (6,), "int32", "int:-5:5")])
case("nn_gelu_exact", "nn.gelu", X, {"approximate": False}, order2=True)
case("nn_elu_alpha", "nn.elu", X, {"alpha": 0.5})
case("nn_celu_alpha", "nn.celu", X, {"alpha": 2.0})
case("nn_leaky_relu_slope", "nn.leaky_relu", [(None, (3, 5), F, "spread")], {"negative_slope": 0.1})
case("nn_squareplus_b", "nn.squareplus", X, {"b": 1})
case("nn_softplus_int", "nn.softplus", [(None, (5,), "int32", "int:-3:3")])
case("nn_hard_shrink_t", "nn.hard_shrink", [(None, (3, 5), F, "spread")], {"threshold": 1.0})
case("nn_soft_shrink_t", "nn.soft_shrink", [(None, (3, 5), F, "spread")], {"threshold": 0.25})
case("nn_threshold", "nn.threshold", [(None, (3, 5), F, "spread")], {"threshold": 0.1, "default_value": -1.0})
case("nn_glu", "nn.glu", [(None, (3, 6), F, "normal")], order2=True)
case("nn_glu_axis0", "nn.glu", [(None, (4, 3), F, "normal")], {"axis": 0})
case("nn_softmax", "nn.softmax", X3, order2=True)
case("nn_softmax_axis1", "nn.softmax", X3, {"axis": 1})
case("nn_softmax_axes", "nn.softmax", X3, {"axis": (0, 2)})
case("nn_log_softmax", "nn.log_softmax", X3, order2=True)
case("nn_log_softmax_axis0", "nn.log_softmax", X3, {"axis": 0})
case("nn_sparsemax", "nn.sparsemax", [(None, (3, 5), F, "spread")])
case("nn_sparsemax_axis0", "nn.sparsemax", [(None, (4, 3), F, "spread")], {"axis": 0})

# ----------------------------------------------------------------------------- nn: conv, pooling
for fmt, shape in (("channels_last", (2, 7, 8, 3)), ("channels_first", (2, 3, 7, 8))):
    img = [(None, shape, F, "spread")]
    tag = "cl" if fmt == "channels_last" else "cf"
    case(f"nn_max_pool_{tag}", "nn.max_pool", img, {"pool_size": 2, "strides": 2, "data_format": fmt})
    case(f"nn_max_pool_same_{tag}", "nn.max_pool", img,
         {"pool_size": (3, 2), "strides": (2, 1), "padding": "same", "data_format": fmt})
    case(f"nn_average_pool_{tag}", "nn.average_pool", img, {"pool_size": 2, "strides": 1, "data_format": fmt})
    case(f"nn_average_pool_same_{tag}", "nn.average_pool", img,
         {"pool_size": 3, "strides": 2, "padding": "same", "data_format": fmt})
    case(f"nn_adaptive_average_pool_{tag}", "nn.adaptive_average_pool", img,
         {"output_size": (3, 5), "data_format": fmt})
    case(f"nn_adaptive_max_pool_{tag}", "nn.adaptive_max_pool", img, {"output_size": 3, "data_format": fmt})
    kernel = (None, (3, 2, 3, 4), F, "normal")
    case(f"nn_conv_{tag}", "nn.conv", [img[0], kernel], {"data_format": fmt}, order2=True)
    case(f"nn_conv_same_strided_{tag}", "nn.conv", [img[0], kernel],
         {"strides": 2, "padding": "same", "data_format": fmt})
    case(f"nn_conv_dilated_{tag}", "nn.conv", [img[0], kernel], {"dilation_rate": (2, 1), "data_format": fmt})
    case(f"nn_depthwise_conv_{tag}", "nn.depthwise_conv", [img[0], (None, (3, 3, 3, 2), F, "normal")],
         {"padding": "same", "data_format": fmt})
    case(f"nn_separable_conv_{tag}", "nn.separable_conv",
         [img[0], (None, (2, 2, 3, 2), F, "normal"), (None, (1, 1, 6, 4), F, "normal")], {"data_format": fmt})
    case(f"nn_conv_transpose_{tag}", "nn.conv_transpose", [img[0], (None, (3, 3, 5, 3), F, "normal")],
         {"strides": 2, "data_format": fmt})
    case(f"nn_conv_transpose_same_{tag}", "nn.conv_transpose", [img[0], (None, (3, 2, 4, 3), F, "normal")],
         {"strides": (2, 1), "padding": "same", "data_format": fmt})
case("nn_conv_groups", "nn.conv", [(None, (2, 6, 6, 4), F, "normal"), (None, (3, 3, 2, 6), F, "normal")])
case("nn_conv1d", "nn.conv", [(None, (2, 9, 3), F, "normal"), (None, (3, 3, 4), F, "normal")],
     {"strides": 2, "padding": "same"})
case("nn_conv3d", "nn.conv", [(None, (1, 4, 5, 4, 2), F, "normal"), (None, (2, 2, 2, 2, 3), F, "normal")])
case("nn_conv_transpose_outpad", "nn.conv_transpose", [(None, (1, 5, 5, 2), F, "normal"),
                                                       (None, (3, 3, 3, 2), F, "normal")],
     {"strides": 2, "output_padding": 1, "padding": "same"})
case("nn_conv_transpose_1d", "nn.conv_transpose", [(None, (2, 6, 3), F, "normal"), (None, (4, 2, 3), F, "normal")],
     {"strides": 3})
case("nn_max_pool_1d", "nn.max_pool", [(None, (2, 9, 3), F, "spread")], {"pool_size": 3, "strides": 2})
case("nn_average_pool_3d", "nn.average_pool", [(None, (1, 4, 4, 4, 2), F, "normal")], {"pool_size": 2, "strides": 2})
case("nn_adaptive_average_pool_1d", "nn.adaptive_average_pool", [(None, (2, 10, 3), F, "normal")],
     {"output_size": 4})
case("nn_adaptive_max_pool_3d", "nn.adaptive_max_pool", [(None, (1, 5, 6, 4, 2), F, "spread")],
     {"output_size": (2, 3, 3)})

# ----------------------------------------------------------------------------- nn: encodings, losses
case("nn_one_hot", "nn.one_hot", [(None, (2, 3), "int32", "int:-1:5")], {"num_classes": 4})
case("nn_one_hot_axis0", "nn.one_hot", [(None, (3,), "int32", "int:0:4")], {"num_classes": 4, "axis": 0,
                                                                            "dtype": "int32"})
case("nn_multi_hot", "nn.multi_hot", [(None, (3, 4), "int32", "int:0:6")], {"num_classes": 6})
case("nn_multi_hot_1d", "nn.multi_hot", [(None, (4,), "int32", "int:0:6")], {"num_classes": 6, "dtype": "int32"})
case("nn_binary_crossentropy", "nn.binary_crossentropy", [(None, (3, 4), F, "uniform"), (None, (3, 4), F, "uniform")],
     order2=True)
case("nn_binary_crossentropy_logits", "nn.binary_crossentropy",
     [(None, (3, 4), F, "uniform"), (None, (3, 4), F, "normal")], {"from_logits": True}, order2=True)
case("nn_categorical_crossentropy", "nn.categorical_crossentropy",
     [(None, (3, 5), F, "onehot"), (None, (3, 5), F, "uniform")])
case("nn_categorical_crossentropy_logits", "nn.categorical_crossentropy",
     [(None, (3, 5), F, "onehot"), (None, (3, 5), F, "normal")], {"from_logits": True}, order2=True)
case("nn_categorical_crossentropy_axis0", "nn.categorical_crossentropy",
     [(None, (4, 3), F, "uniform"), (None, (4, 3), F, "normal")], {"from_logits": True, "axis": 0})
case("nn_sparse_categorical_crossentropy", "nn.sparse_categorical_crossentropy",
     [(None, (3,), "int32", "int:0:5"), (None, (3, 5), F, "uniform")])
case("nn_sparse_categorical_crossentropy_logits", "nn.sparse_categorical_crossentropy",
     [(None, (3, 1), "int32", "int:0:5"), (None, (3, 5), F, "normal")], {"from_logits": True})
case("nn_ctc_loss", "nn.ctc_loss", [(None, (2, 3), "int32", "int:1:5"), (None, (2, 7, 5), F, "normal"),
                                    (None, (2,), "int32", "int:1:4"), (None, (2,), "int32", "int:5:8")])
case("nn_ctc_loss_mask4", "nn.ctc_loss", [(None, (2, 3), "int32", "int:0:4"), (None, (2, 6, 5), F, "normal"),
                                          (None, (2,), "int32", "int:2:4"), (None, (2,), "int32", "int:4:7")],
     {"mask_index": 4})
case("nn_ctc_decode", "nn.ctc_decode", [(None, (2, 6, 4), F, "spread"), (None, (2,), "int32", "int:3:7")],
     grad=False)
case("nn_ctc_decode_nomerge", "nn.ctc_decode", [(None, (2, 6, 4), F, "spread"), (None, (2,), "int32", "int:3:7")],
     {"merge_repeated": False, "mask_index": 3}, grad=False)
case("nn_ctc_decode_beam", "nn.ctc_decode", [(None, (2, 6, 4), F, "normal"), (None, (2,), "int32", "int:3:7")],
     {"strategy": "beam_search", "beam_width": 3, "top_paths": 2}, grad=False)
case("nn_ctc_decode_beam_mask", "nn.ctc_decode", [(None, (3, 5, 3), F, "normal"), (None, (3,), "int32", "int:2:6")],
     {"strategy": "beam_search", "beam_width": 4, "mask_index": 2}, grad=False)
case("nn_psnr", "nn.psnr", [(None, (2, 4, 4), F, "uniform"), (None, (2, 4, 4), F, "uniform")], {"max_val": 1.0})

# ----------------------------------------------------------------------------- nn: normalization, attention, misc
case("nn_moments", "nn.moments", X3, {"axes": [0, 2]}, order2=True)
case("nn_moments_keepdims", "nn.moments", X3, {"axes": [1], "keepdims": True})
case("nn_batch_normalization", "nn.batch_normalization",
     [(None, (2, 3, 4), F, "normal"), (None, (3,), F, "normal"), (None, (3,), F, "positive"),
      ("offset", (3,), F, "normal"), ("scale", (3,), F, "normal")], {"axis": 1}, order2=True)
case("nn_batch_normalization_plain", "nn.batch_normalization",
     [(None, (2, 4), F, "normal"), (None, (4,), F, "normal"), (None, (4,), F, "positive")],
     {"axis": -1, "epsilon": 0.1})
case("nn_normalize", "nn.normalize", X3, order2=True)
case("nn_normalize_l1_axis1", "nn.normalize", X3, {"axis": 1, "order": 1})
case("nn_rms_normalization", "nn.rms_normalization", [(None, (2, 3, 4), F, "normal"), ("scale", (4,), F, "normal")],
     order2=True)
case("nn_rms_normalization_axes", "nn.rms_normalization", X3, {"axis": (1, 2), "epsilon": 0.01})
case("nn_layer_normalization", "nn.layer_normalization",
     [(None, (2, 3, 4), F, "normal"), ("gamma", (4,), F, "normal"), ("beta", (4,), F, "normal")], order2=True)
case("nn_layer_normalization_axes", "nn.layer_normalization",
     [(None, (2, 3, 4), F, "normal"), ("gamma", (3, 4), F, "normal")], {"axis": (1, 2), "epsilon": 1e-3})
case("nn_layer_normalization_rms", "nn.layer_normalization",
     [(None, (2, 5), F, "normal"), ("gamma", (5,), F, "normal")], {"rms_scaling": True})
case("nn_dot_product_attention", "nn.dot_product_attention",
     [(None, (2, 3, 2, 4), F, "normal"), (None, (2, 5, 2, 4), F, "normal"), (None, (2, 5, 2, 4), F, "normal")],
     order2=True)
case("nn_dot_product_attention_gqa_mask", "nn.dot_product_attention",
     [(None, (2, 4, 4, 3), F, "normal"), (None, (2, 4, 2, 3), F, "normal"), (None, (2, 4, 2, 3), F, "normal"),
      ("bias", (2, 1, 4, 4), F, "normal"), ("mask", (2, 1, 4, 4), "bool", "bool")], {"scale": 0.5})
case("nn_dot_product_attention_causal", "nn.dot_product_attention",
     [(None, (1, 4, 2, 3), F, "normal"), (None, (1, 4, 2, 3), F, "normal"), (None, (1, 4, 2, 3), F, "normal")],
     {"is_causal": True})
case("nn_polar", "nn.polar", [(None, (5,), F, "positive"), (None, (5,), F, "normal")], grad=False)
case("nn_unfold", "nn.unfold", [(None, (2, 3, 5, 6), F, "normal")], {"kernel_size": 2, "padding": 1, "stride": (1, 2)})
case("nn_fold", "nn.fold", [(None, (2, 12, 20), F, "normal")], {"output_size": (5, 6), "kernel_size": 2})
case("nn_depth_to_space", "nn.depth_to_space", [(None, (2, 3, 2, 8), F, "normal")], {"block_size": 2})
case("nn_depth_to_space_cf", "nn.depth_to_space", [(None, (2, 8, 3, 2), F, "normal")],
     {"block_size": 2, "data_format": "channels_first"})
case("nn_space_to_depth", "nn.space_to_depth", [(None, (2, 4, 6, 3), F, "normal")], {"block_size": 2})
case("nn_space_to_depth_cf", "nn.space_to_depth", [(None, (2, 3, 4, 6), F, "normal")],
     {"block_size": 2, "data_format": "channels_first"})

# ----------------------------------------------------------------------------- linalg
case("linalg_cholesky", "linalg.cholesky", [(None, (3, 3), F, "spd")], order2=True)
case("linalg_cholesky_upper_batched", "linalg.cholesky", [(None, (2, 3, 3), F, "spd")], {"upper": True})
case("linalg_cholesky_inverse", "linalg.cholesky_inverse", [(None, (3, 3), F, "lower")])
case("linalg_cholesky_inverse_upper", "linalg.cholesky_inverse", [(None, (3, 3), F, "lower")], {"upper": True},
     grad=False)
case("linalg_det", "linalg.det", [(None, (2, 3, 3), F, "spd")], order2=True)
case("linalg_eig", "linalg.eig", [(None, (3, 3), F, "spd")], grad=False)
case("linalg_eigh", "linalg.eigh", [(None, (3, 3), F, "spd")], grad=False)
case("linalg_inv", "linalg.inv", [(None, (2, 3, 3), F, "spd")], order2=True)
case("linalg_lu_factor", "linalg.lu_factor", [(None, (3, 3), F, "normal")], grad=False)
case("linalg_lu_factor_batched", "linalg.lu_factor", [(None, (2, 3, 3), F, "normal")], grad=False)
case("linalg_norm", "linalg.norm", [(None, (3, 4), F, "normal")], order2=True)
case("linalg_norm_axis", "linalg.norm", [(None, (3, 4), F, "normal")], {"axis": 1, "ord": 3, "keepdims": True})
case("linalg_norm_fro", "linalg.norm", [(None, (2, 3, 4), F, "normal")], {"axis": (1, 2), "ord": "fro"})
case("linalg_norm_inf", "linalg.norm", [(None, (3, 4), F, "spread")], {"axis": (0, 1), "ord": float("inf")})
case("linalg_norm_int", "linalg.norm", [(None, (5,), "int32", "int:-4:4")])
case("linalg_qr", "linalg.qr", [(None, (4, 3), F, "normal")])
case("linalg_qr_complete", "linalg.qr", [(None, (4, 3), F, "normal")], {"mode": "complete"}, grad=False)
case("linalg_solve", "linalg.solve", [(None, (3, 3), F, "spd"), (None, (3, 2), F, "normal")], order2=True)
case("linalg_solve_triangular", "linalg.solve_triangular", [(None, (3, 3), F, "lower"), (None, (3, 2), F, "normal")],
     {"lower": True})
case("linalg_solve_triangular_upper", "linalg.solve_triangular",
     [(None, (3, 3), F, "lower"), (None, (3,), F, "normal")], grad=False)
case("linalg_svd", "linalg.svd", [(None, (4, 3), F, "normal")], {"full_matrices": False}, grad=False)
case("linalg_svd_values", "linalg.svd", [(None, (4, 3), F, "normal")], {"compute_uv": False})
case("linalg_lstsq", "linalg.lstsq", [(None, (5, 3), F, "normal"), (None, (5, 2), F, "normal")])
case("linalg_matrix_rank", "linalg.matrix_rank", [(None, (4, 3), F, "normal")])
case("linalg_pinv", "linalg.pinv", [(None, (4, 3), F, "normal")])

# ----------------------------------------------------------------------------- image
for fmt, img in (("channels_last", IMG), ("channels_first", IMG_CF)):
    tag = "cl" if fmt == "channels_last" else "cf"
    case(f"image_resize_{tag}", "image.resize", img, {"size": (4, 9), "data_format": fmt})
    case(f"image_resize_nearest_{tag}", "image.resize", img, {"size": (9, 5), "interpolation": "nearest",
                                                              "data_format": fmt})
    case(f"image_resize_bicubic_aa_{tag}", "image.resize", img, {"size": (3, 4), "interpolation": "bicubic",
                                                                 "antialias": True, "data_format": fmt})
    case(f"image_resize_crop_{tag}", "image.resize", img, {"size": (4, 8), "crop_to_aspect_ratio": True,
                                                           "data_format": fmt})
    case(f"image_resize_pad_{tag}", "image.resize", img, {"size": (8, 4), "pad_to_aspect_ratio": True,
                                                          "fill_value": 0.5, "data_format": fmt})
    case(f"image_affine_transform_{tag}", "image.affine_transform",
         [img[0], (None, (2, 8), F, "affine")], {"data_format": fmt}, wrt=[0])
    case(f"image_rgb_to_grayscale_{tag}", "image.rgb_to_grayscale", img, {"data_format": fmt})
    case(f"image_rgb_to_hsv_{tag}", "image.rgb_to_hsv", img, {"data_format": fmt})
    case(f"image_hsv_to_rgb_{tag}", "image.hsv_to_rgb", img, {"data_format": fmt})
    case(f"image_gaussian_blur_{tag}", "image.gaussian_blur", img, {"kernel_size": (3, 5), "sigma": (1.0, 2.0),
                                                                    "data_format": fmt})
    case(f"image_extract_patches_{tag}", "image.extract_patches", img, {"size": 2, "data_format": fmt})
    case(f"image_extract_patches_same_{tag}", "image.extract_patches", img,
         {"size": (3, 2), "strides": 2, "padding": "same", "data_format": fmt})
    case(f"image_pad_images_{tag}", "image.pad_images", img, {"top_padding": 1, "bottom_padding": 2,
                                                              "left_padding": 3, "target_width": 11,
                                                              "data_format": fmt})
    case(f"image_crop_images_{tag}", "image.crop_images", img, {"top_cropping": 1, "target_height": 3,
                                                                "left_cropping": 2, "right_cropping": 1,
                                                                "data_format": fmt})
    case(f"image_perspective_transform_{tag}", "image.perspective_transform",
         [img[0], (None, (2, 4, 2), F, "corners"), (None, (2, 4, 2), F, "corners")], {"data_format": fmt}, grad=False)
    case(f"image_sobel_edges_{tag}", "image.sobel_edges", img, {"data_format": fmt})
    case(f"image_elastic_transform_{tag}", "image.elastic_transform", img,
         {"seed": 3, "sigma": 1.0, "alpha": 2.0, "data_format": fmt}, grad=False)
case("image_resize_single", "image.resize", [(None, (6, 7, 3), F, "uniform")], {"size": (3, 3),
                                                                                 "interpolation": "lanczos3"})
case("image_affine_transform_nearest_single", "image.affine_transform",
     [(None, (6, 7, 2), F, "uniform"), (None, (8,), F, "affine")],
     {"interpolation": "nearest", "fill_mode": "reflect"}, grad=False)
case("image_affine_transform_wrap", "image.affine_transform", [(None, (2, 5, 5, 1), F, "uniform"),
                                                               (None, (2, 8), F, "affine")],
     {"fill_mode": "wrap", "fill_value": 0.5}, grad=False)
case("image_map_coordinates", "image.map_coordinates", [(None, (5, 6), F, "normal"), (None, (2, 3, 4), F, "positive")],
     {"order": 1})
case("image_map_coordinates_nearest", "image.map_coordinates",
     [(None, (4, 5, 3), F, "normal"), (None, (3, 7), F, "positive")], {"order": 0, "fill_mode": "mirror"}, grad=False)
case("image_extract_patches_3d", "image.extract_patches_3d", [(None, (1, 4, 4, 4, 2), F, "normal")], {"size": 2})
case("image_extract_patches_3d_cf", "image.extract_patches_3d", [(None, (2, 4, 4, 4), F, "normal")],
     {"size": (2, 2, 1), "strides": 1, "data_format": "channels_first"})
case("image_rgb_to_grayscale_int", "image.rgb_to_grayscale", [(None, (4, 5, 3), "int32", "int:0:255")])
case("image_scale_and_translate", "image.scale_and_translate",
     [(None, (2, 5, 6, 3), F, "uniform"), ("scale", (2,), F, "positive"), ("translation", (2,), F, "normal")],
     {"output_shape": (2, 7, 4, 3), "spatial_dims": (1, 2), "method": "linear"})
case("image_ssim", "image.ssim", [(None, (2, 12, 13, 3), F, "uniform"), (None, (2, 12, 13, 3), F, "uniform")],
     {"filter_size": 5})
case("image_ssim_cf_single", "image.ssim", [(None, (2, 12, 12), F, "uniform"), (None, (2, 12, 12), F, "uniform")],
     {"filter_size": 3, "max_val": 2.0, "data_format": "channels_first"})

# ----------------------------------------------------------------------------- core (array ops)
case("core_cast", "core.cast", [(None, (2, 3), F, "normal")], {"dtype": "int32"})
case("core_cast_float16", "core.cast", [(None, (2, 3), F, "normal")], {"dtype": "float16"})
case("core_saturate_cast", "core.saturate_cast", [(None, (6,), F, "normal")], {"dtype": "uint8"}, grad=False)
case("core_saturate_cast_int8", "core.saturate_cast", [(None, (6,), "int32", "int:-300:300")], {"dtype": "int8"})
case("core_convert_to_tensor", "core.convert_to_tensor", [(None, (2, 3), F, "normal")], {"dtype": "float16"})
case("core_stop_gradient", "core.stop_gradient", [(None, (3,), F, "normal")])
case("core_slice", "core.slice", [(None, (4, 5), F, "normal")], {"start_indices": (1, 2), "shape": (2, 3)})
case("core_slice_rest", "core.slice", [(None, (4, 5), F, "normal")], {"start_indices": [1, 0], "shape": (-1, 2)})
case("core_slice_update", "core.slice_update", [(None, (4, 5), F, "normal"), ("updates", (2, 2), F, "normal")],
     {"start_indices": (1, 3)})
case("core_scatter", "core.scatter", [(None, (3, 2), "int32", "int:0:3"), (None, (3,), F, "normal")],
     {"shape": (3, 3)})
case("core_scatter_rows", "core.scatter", [(None, (2, 1), "int32", "int:0:4"), (None, (2, 5), F, "normal")],
     {"shape": (4, 5)})
case("core_scatter_update", "core.scatter_update", [(None, (3, 4), F, "normal"), (None, (2, 2), "int32", "int:0:3"),
                                                    (None, (2,), F, "normal")])
for reduction in ("add", "max", "min", "mul"):
    case(f"core_scatter_update_{reduction}", "core.scatter_update",
         [(None, (3, 4), F, "spread"), (None, (2, 2), "int32", "int:0:3"), (None, (2,), F, "spread")],
         {"reduction": reduction}, grad=reduction == "add")
case("core_unstack", "core.unstack", [(None, (2, 3), F, "normal")], {"axis": 1})

"""The cases of tests/test_keras_ops_numpy.py: ``keras.ops.numpy`` and ``keras.ops.math`` calls
on generated inputs, run once on Keras 3 (JAX backend) by
tests/fixtures/keras_ops_numpy/make_reference.py and again on minikeras by the test.

A case is (id, op, arrays, kwargs, options) as in keras_ops_cases.py (``op``: "numpy.name",
"math.name" or "einops.name"); beyond its options, ``lists``: sizes of groups of the leading arrays
passed each as one list, first (``concatenate([a, b])``, an FFT's ``(real, imag)``,
``select([c1, c2], [x1, x2])``); ``partition``: the output is compared as partitioned at that
index (``argpartition``: the sets before and after it); ``args``: leading positional arguments
that are not arrays (``einsum``'s subscripts).
"""
import numpy as np
from keras_ops_cases import hash_id

F, I, B, H = "float32", "int32", "bool", "float16"


def inputs(case_id, arrays):
    """The case's input arrays, reproducibly (a seed per case id)."""
    rng = np.random.default_rng(abs(hash_id("numpy|" + case_id)) % (2 ** 32))
    out = []
    for _, shape, dtype, kind in arrays:
        if kind == "normal":
            a = rng.standard_normal(shape)
        elif kind == "unit":  # inside (-1, 1)
            a = rng.uniform(-0.9, 0.9, shape)
        elif kind == "positive":
            a = rng.uniform(0.5, 2.0, shape)
        elif kind == "above1":
            a = rng.uniform(1.2, 3.0, shape)
        elif kind.startswith("int:"):
            low, high = (int(v) for v in kind[4:].split(":"))
            a = rng.integers(low, high, shape)
        elif kind == "bool":
            a = rng.uniform(size=shape) > 0.4
        elif kind == "spread":  # distinct values (no ties for max, sort, median)
            a = rng.permutation(int(np.prod(shape))).reshape(shape) / np.prod(shape) * 4 - 2 + \
                rng.uniform(0, 0.01, shape)
        elif kind == "sorted":
            a = np.sort(rng.standard_normal(shape))
        elif kind == "spd":
            m = rng.standard_normal(shape)
            a = m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])
        elif kind == "withnan":
            a = rng.standard_normal(shape)
            a.reshape(-1)[::4] = np.nan
        elif kind == "special":  # nan, infinities and zeros among normals
            a = rng.standard_normal(shape)
            a.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, 0.0]
        else:
            raise ValueError(kind)
        out.append(np.asarray(a).astype(dtype))
    return out


def call(fn, arrays, values, kwargs, options):
    """``fn`` called as the case says, with ``values`` in place of its arrays."""
    lists, start = [], 0
    for size in options.get("lists", ()):
        lists.append(list(values[start:start + size]))
        start += size
    pos = [v for (key, *_), v in zip(arrays[start:], values[start:]) if key is None]
    kw = {key: v for (key, *_), v in zip(arrays[start:], values[start:]) if key is not None}
    return fn(*options.get("args", ()), *lists, *pos, **kw, **kwargs)


CASES = []


def case(case_id, op, arrays, kwargs=None, **options):
    CASES.append((case_id, op, arrays, kwargs or {}, options))


def a(shape, dtype=F, kind="normal", key=None):
    return (key, shape, dtype, kind)


# ----------------------------------------------------------------------------- elementwise, one input
DOMAIN = {"arccos": "unit", "arcsin": "unit", "arctanh": "unit", "arccosh": "above1", "log": "positive",
          "log10": "positive", "log1p": "positive", "log2": "positive", "sqrt": "positive", "reciprocal": "positive",
          "cbrt": "positive"}
for name in ("arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "ceil", "cos", "cosh", "floor", "sin",
             "sinc", "sinh", "tan", "tanh", "angle", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2", "sqrt",
             "abs", "absolute", "fabs", "cbrt", "conj", "conjugate", "copy", "deg2rad", "rad2deg", "imag", "real",
             "reciprocal", "sign", "signbit", "negative", "square", "isfinite", "isinf", "isnan", "isneginf",
             "isposinf", "isreal", "fliplr", "flipud", "ravel", "i0", "trunc", "round"):
    kind = DOMAIN.get(name, "special" if name.startswith("is") else "spread")
    order2 = name in ("sin", "tanh", "exp", "log", "sqrt", "arctan", "square", "cbrt")
    case(f"{name}", f"numpy.{name}", [a((3, 4), F, kind)], order2=order2)
for name in ("exp", "sin", "log1p", "sqrt", "abs", "square", "negative", "sign", "cos", "arctan", "floor", "round",
             "trunc", "i0", "tanh", "log2"):
    case(f"{name}_int", f"numpy.{name}", [a((5,), I, "int:1:9")])
for name in ("exp", "sin", "sqrt", "log", "tanh"):
    case(f"{name}_half", f"numpy.{name}", [a((2, 3), H, "positive")], rtol=2e-3, atol=2e-3)
case("exp_bool", "numpy.exp", [a((4,), B, "bool")])
case("logical_not", "numpy.logical_not", [a((2, 3), B, "bool")])
case("bitwise_invert", "numpy.bitwise_invert", [a((5,), I, "int:-9:9")])
case("bitwise_not", "numpy.bitwise_not", [a((5,), I, "int:-9:9")])
case("corrcoef", "numpy.corrcoef", [a((3, 6))])
case("round_decimals", "numpy.round", [a((2, 3))], {"decimals": 2})
case("round_int_negative", "numpy.round", [a((4,), I, "int:0:999")], {"decimals": -1})

# ----------------------------------------------------------------------------- elementwise, two inputs
for name in ("add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "fmax", "fmin",
             "arctan2", "logaddexp", "logaddexp2", "hypot", "divide_no_nan", "heaviside", "nextafter"):
    case(name, f"numpy.{name}", [a((2, 3), F, "spread"), a((3,), F, "spread")],
         order2=name in ("multiply", "divide", "logaddexp", "arctan2"), grad=name != "nextafter")
for name in ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal"):
    case(name, f"numpy.{name}", [a((2, 3), I, "int:0:3"), a((2, 1), I, "int:0:3")])
for name in ("mod", "fmod", "floor_divide"):
    case(name, f"numpy.{name}", [a((2, 3), F, "spread"), a((2, 3), F, "above1")])
    case(f"{name}_int", f"numpy.{name}", [a((2, 3), I, "int:-9:9"), a((3,), I, "int:1:4")])
case("power", "numpy.power", [a((2, 3), F, "positive"), a((2, 3), F, "normal")], order2=True)
case("power_int", "numpy.power", [a((4,), I, "int:0:4"), a((4,), I, "int:0:3")])
case("add_int_float", "numpy.add", [a((2, 3), I, "int:0:5"), a((3,), F)])
case("add_half_float", "numpy.add", [a((2, 3), H), a((3,), F)])
case("add_python_float", "numpy.add", [a((2, 3), H, key="x1")], {"x2": 1.5})
case("multiply_python_int", "numpy.multiply", [a((2, 3), I, "int:0:5", key="x1")], {"x2": 3})
case("multiply_int_python_float", "numpy.multiply", [a((2, 3), I, "int:0:5", key="x1")], {"x2": 0.5})
case("add_bool", "numpy.add", [a((3,), B, "bool"), a((3,), B, "bool")])
case("arctan2_int", "numpy.arctan2", [a((3,), I, "int:1:5"), a((3,), I, "int:1:5")])
for name in ("logical_and", "logical_or", "logical_xor"):
    case(name, f"numpy.{name}", [a((2, 3), B, "bool"), a((3,), B, "bool")])
for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm"):
    case(name, f"numpy.{name}", [a((2, 3), I, "int:1:30"), a((3,), I, "int:1:30")])
for name in ("bitwise_left_shift", "bitwise_right_shift", "left_shift", "right_shift"):
    case(name, f"numpy.{name}", [a((4,), I, "int:1:60"), a((4,), I, "int:0:4")])
case("ldexp", "numpy.ldexp", [a((4,)), a((4,), I, "int:-2:3")])
for name in ("kron", "outer", "inner", "vdot"):
    case(name, f"numpy.{name}", [a((2, 3)), a((2, 3))] if name in ("kron", "vdot") else [a((3,)), a((3,))])
case("inner_2d", "numpy.inner", [a((2, 3)), a((4, 3))])
case("outer_2d", "numpy.outer", [a((2, 2)), a((3,))])
case("dot", "numpy.dot", [a((2, 3)), a((3, 4))], order2=True)
case("dot_vec", "numpy.dot", [a((3,)), a((3,))])
case("matmul", "numpy.matmul", [a((2, 3, 4)), a((4, 5))], order2=True)
case("matmul_batch", "numpy.matmul", [a((2, 1, 3, 4)), a((3, 4, 2))])
case("matmul_vec", "numpy.matmul", [a((4,)), a((4, 2))])
case("matmul_int8", "numpy.matmul", [a((2, 3), "int8", "int:-5:5"), a((3, 2), "int8", "int:-5:5")])
case("matmul_int_float", "numpy.matmul", [a((2, 3), I, "int:-5:5"), a((3, 2))])
case("tensordot", "numpy.tensordot", [a((2, 3, 4)), a((3, 4, 5))])
case("tensordot_axes", "numpy.tensordot", [a((2, 3, 4)), a((4, 2))], {"axes": [[0, 2], [1, 0]]})
case("tensordot_int_axes", "numpy.tensordot", [a((2, 3)), a((3, 4))], {"axes": 1})
case("cross", "numpy.cross", [a((2, 3)), a((2, 3))])
case("cross_axis", "numpy.cross", [a((3, 2)), a((3, 2))], {"axisa": 0, "axisb": 0, "axisc": 0})
case("einsum", "numpy.einsum", [a((2, 3)), a((3, 4))], args=("ij,jk->ik",), order2=True)
case("einsum_batch", "numpy.einsum", [a((2, 3, 4)), a((2, 4, 5)), a((5,))], args=("bij,bjk,k->bi",))
case("correlate", "numpy.correlate", [a((6,)), a((3,))])
case("correlate_full", "numpy.correlate", [a((6,)), a((3,))], {"mode": "full"})
case("isclose", "numpy.isclose", [a((2, 3)), a((2, 3))], {"atol": 1.0})
case("allclose", "numpy.allclose", [a((2, 3)), a((2, 3))], {"atol": 5.0})
case("isin", "numpy.isin", [a((2, 3), I, "int:0:6"), a((3,), I, "int:0:6")])
case("isin_invert", "numpy.isin", [a((4,), I, "int:0:6"), a((3,), I, "int:0:6")], {"invert": True})
case("digitize", "numpy.digitize", [a((2, 4)), a((3,), F, "sorted")])
case("append", "numpy.append", [a((2, 3)), a((2, 3))])
case("append_axis", "numpy.append", [a((2, 3)), a((1, 3))], {"axis": 0})
case("clip", "numpy.clip", [a((2, 4), F, "spread")], {"x_min": -0.5, "x_max": 0.7})
case("clip_int", "numpy.clip", [a((5,), I, "int:-9:9")], {"x_min": -2, "x_max": 3})
case("clip_bool", "numpy.clip", [a((5,), B, "bool")], {"x_min": 0, "x_max": 1})
case("nan_to_num", "numpy.nan_to_num", [a((3, 4), F, "special")], {"nan": 1.0, "posinf": 9.0, "neginf": -9.0})
case("where", "numpy.where", [a((2, 3), B, "bool"), a((2, 3)), a((3,))])
case("where_scalar", "numpy.where", [a((2, 3), B, "bool", key="condition"), a((2, 3), key="x1")], {"x2": 0.0})
case("select", "numpy.select", [a((2, 3), B, "bool"), a((2, 3))], {"default": -1.0}, lists=(1, 1))
case("select_two", "numpy.select", [a((3,), B, "bool"), a((3,), B, "bool"), a((3,)), a((3,))], lists=(2, 2))

# ----------------------------------------------------------------------------- reductions
for name in ("sum", "mean", "max", "min", "amax", "amin", "prod", "std", "var", "median", "ptp", "argmax", "argmin",
             "all", "any", "count_nonzero", "logsumexp", "nanmax", "nanmin", "nansum", "nanmean", "nanprod",
             "nanstd", "nanvar", "nanmedian", "nanargmax", "nanargmin"):
    module = "math" if name == "logsumexp" else "numpy"
    x = [a((2, 3, 4), F, "withnan" if name.startswith("nan") else "spread")]
    if name in ("all", "any"):
        x = [a((2, 3, 4), B, "bool")]
    grad = not name.startswith("nan") or name in ("nansum", "nanmean", "nanmax", "nanmin")
    case(f"{name}_all", f"{module}.{name}", x, grad=grad)
    case(f"{name}_axis", f"{module}.{name}", x, {"axis": 1}, grad=grad,
         order2=name in ("sum", "mean", "var", "std", "logsumexp", "prod"))
    if name not in ("argmax", "argmin", "nanargmax", "nanargmin", "count_nonzero"):
        case(f"{name}_axes_keepdims", f"{module}.{name}", x, {"axis": (0, 2), "keepdims": True}, grad=grad)
    elif name != "count_nonzero":
        case(f"{name}_keepdims", f"{module}.{name}", x, {"axis": -1, "keepdims": True})
    else:
        case(f"{name}_axes", f"{module}.{name}", x, {"axis": (0, 2)})
for name in ("sum", "mean", "max", "prod", "var", "std", "median", "argmax"):
    case(f"{name}_int", f"numpy.{name}", [a((3, 4), I, "int:-5:9")], {"axis": 0})
case("mean_half", "numpy.mean", [a((3, 4), H)], rtol=2e-3, atol=2e-3)
case("var_half", "numpy.var", [a((3, 4), H)], rtol=2e-3, atol=2e-3)
case("mean_bool", "numpy.mean", [a((3, 4), B, "bool")])
case("sum_bool", "numpy.sum", [a((3, 4), B, "bool")])
case("max_initial", "numpy.max", [a((2, 3))], {"axis": 1, "initial": 0.5})
case("prod_dtype", "numpy.prod", [a((2, 3), I, "int:1:4")], {"dtype": "float32"})
case("median_keepdims_all", "numpy.median", [a((2, 3), F, "spread")], {"keepdims": True})
case("argmax_negative_zero", "numpy.argmax", [a((2, 3), F, "int:-1:1")], {"axis": 1})
case("average", "numpy.average", [a((2, 3))], order2=True)
case("average_weights", "numpy.average", [a((2, 3)), a((3,), F, "positive", key="weights")], {"axis": 1})
case("average_int", "numpy.average", [a((2, 3), I, "int:0:9")], {"axis": 0})
case("trace", "numpy.trace", [a((3, 4))])
case("trace_offset", "numpy.trace", [a((2, 3, 4))], {"offset": 1, "axis1": 1, "axis2": 2})
for name in ("cumsum", "cumprod", "nancumsum", "nancumprod"):
    kind = "withnan" if name.startswith("nan") else "normal"
    case(name, f"numpy.{name}", [a((2, 4), F, kind)], grad=not name.startswith("nan"))
    case(f"{name}_axis", f"numpy.{name}", [a((2, 4), F, kind)], {"axis": 1}, grad=not name.startswith("nan"))
case("cumsum_int_dtype", "numpy.cumsum", [a((5,), I, "int:0:5")], {"dtype": "float32"})
for name in ("quantile", "percentile", "nanquantile", "nanpercentile"):
    q = 0.3 if "quantile" in name else 30.0
    case(name, f"numpy.{name}", [a((3, 5), F, "withnan" if name.startswith("nan") else "spread")],
         {"q": q, "axis": 1}, grad=not name.startswith("nan"))
case("quantile_vector_q", "numpy.quantile", [a((3, 5), F, "spread"), a((2,), F, "unit", key="q")],
     {"axis": 0, "keepdims": True}, grad=False)
case("quantile_method", "numpy.quantile", [a((7,), F, "spread")], {"q": 0.4, "method": "nearest"})
case("quantile_keepdims_all", "numpy.quantile", [a((2, 3), F, "spread")], {"q": 0.5, "keepdims": True})

# ----------------------------------------------------------------------------- shapes and arrangement
case("reshape", "numpy.reshape", [a((2, 6))], {"newshape": (3, -1)})
case("broadcast_to", "numpy.broadcast_to", [a((3,))], {"shape": (2, 3)})
case("expand_dims", "numpy.expand_dims", [a((2, 3))], {"axis": 1})
case("expand_dims_tuple", "numpy.expand_dims", [a((2, 3))], {"axis": (0, -1)})
case("squeeze", "numpy.squeeze", [a((1, 3, 1))])
case("squeeze_axis", "numpy.squeeze", [a((1, 3, 1))], {"axis": -1})
case("transpose", "numpy.transpose", [a((2, 3, 4))])
case("transpose_axes", "numpy.transpose", [a((2, 3, 4))], {"axes": (1, 0, 2)})
case("swapaxes", "numpy.swapaxes", [a((2, 3, 4))], {"axis1": 0, "axis2": 2})
case("moveaxis", "numpy.moveaxis", [a((2, 3, 4))], {"source": 0, "destination": -1})
case("moveaxis_many", "numpy.moveaxis", [a((2, 3, 4))], {"source": [0, 1], "destination": [2, 0]})
case("flip", "numpy.flip", [a((2, 3))])
case("flip_axis", "numpy.flip", [a((2, 3, 4))], {"axis": (0, 2)})
case("roll", "numpy.roll", [a((2, 5))], {"shift": 2})
case("roll_axis", "numpy.roll", [a((2, 5))], {"shift": -1, "axis": 1})
case("rot90", "numpy.rot90", [a((2, 3))])
case("rot90_k", "numpy.rot90", [a((2, 3, 4))], {"k": 3, "axes": (1, 2)})
case("tile", "numpy.tile", [a((2, 3))], {"repeats": (2, 1)})
case("tile_int", "numpy.tile", [a((3,))], {"repeats": 2})
case("repeat", "numpy.repeat", [a((2, 3))], {"repeats": 2})
case("repeat_axis", "numpy.repeat", [a((2, 3))], {"repeats": 2, "axis": 1})
case("concatenate", "numpy.concatenate", [a((2, 3)), a((1, 3))], lists=(2,))
case("concatenate_axis", "numpy.concatenate", [a((2, 3)), a((2, 1)), a((2, 2))], {"axis": 1}, lists=(3,))
case("concatenate_mixed", "numpy.concatenate", [a((2,), I, "int:0:4"), a((3,))], lists=(2,))
case("stack", "numpy.stack", [a((2, 3)), a((2, 3))], lists=(2,))
case("stack_axis", "numpy.stack", [a((2, 3)), a((2, 3))], {"axis": -1}, lists=(2,))
for name in ("hstack", "vstack", "dstack"):
    case(name, f"numpy.{name}", [a((2, 3)), a((2, 3))], lists=(2,))
case("split", "numpy.split", [a((6, 2))], {"indices_or_sections": 3})
case("split_indices", "numpy.split", [a((2, 6))], {"indices_or_sections": [1, 4], "axis": 1})
case("array_split", "numpy.array_split", [a((7,))], {"indices_or_sections": 3})
case("hsplit", "numpy.hsplit", [a((2, 4))], {"indices_or_sections": 2})
case("vsplit", "numpy.vsplit", [a((4, 2))], {"indices_or_sections": 2})
case("dsplit", "numpy.dsplit", [a((2, 2, 4))], {"indices_or_sections": [1]})
case("diag", "numpy.diag", [a((3,))])
case("diag_matrix", "numpy.diag", [a((3, 4))], {"k": 1})
case("diagflat", "numpy.diagflat", [a((2, 2))], {"k": -1})
case("diagonal", "numpy.diagonal", [a((3, 4))])
case("diagonal_axes", "numpy.diagonal", [a((2, 3, 4))], {"offset": 1, "axis1": 1, "axis2": 2})
case("tril", "numpy.tril", [a((3, 4))])
case("triu", "numpy.triu", [a((2, 3, 3))], {"k": 1})
case("diff", "numpy.diff", [a((2, 5))])
case("diff_n", "numpy.diff", [a((4, 3))], {"n": 2, "axis": 0})
case("pad", "numpy.pad", [a((2, 3))], {"pad_width": ((1, 2), (0, 1))})
case("pad_value", "numpy.pad", [a((2, 3))], {"pad_width": 1, "constant_values": 2.0})
case("pad_reflect", "numpy.pad", [a((2, 4))], {"pad_width": ((0, 0), (2, 1)), "mode": "reflect"})
case("pad_symmetric", "numpy.pad", [a((3, 3))], {"pad_width": 1, "mode": "symmetric"})
case("pad_edge", "numpy.pad", [a((3,))], {"pad_width": (2, 1), "mode": "edge"})
case("take", "numpy.take", [a((3, 4)), a((2,), I, "int:0:4")], {"axis": 1})
case("take_flat", "numpy.take", [a((3, 4)), a((2, 2), I, "int:0:12")])
case("take_along_axis", "numpy.take_along_axis", [a((3, 4)), a((3, 2), I, "int:0:4")], {"axis": 1})
case("sort", "numpy.sort", [a((3, 4), F, "spread")])
case("sort_axis", "numpy.sort", [a((3, 4), F, "spread")], {"axis": 0})
case("argsort", "numpy.argsort", [a((3, 4), F, "spread")])
case("argsort_axis", "numpy.argsort", [a((3, 4), F, "spread")], {"axis": 0})
case("argpartition", "numpy.argpartition", [a((6,), F, "spread")], {"kth": 2}, partition=2)
case("searchsorted", "numpy.searchsorted", [a((5,), F, "sorted"), a((2, 3))])
case("searchsorted_right", "numpy.searchsorted", [a((5,), I, "int:0:3"), a((4,), I, "int:0:3")],
     {"side": "right"})
case("meshgrid", "numpy.meshgrid", [a((3,)), a((2,))])
case("meshgrid_ij", "numpy.meshgrid", [a((3,)), a((2,))], {"indexing": "ij"})
case("trapezoid", "numpy.trapezoid", [a((2, 5))])
case("trapezoid_x", "numpy.trapezoid", [a((2, 5)), a((5,), F, "sorted", key="x")], {"axis": -1})
case("trapezoid_dx", "numpy.trapezoid", [a((5, 2))], {"dx": 0.5, "axis": 0})
case("vander", "numpy.vander", [a((3,))])
case("vander_n", "numpy.vander", [a((3,))], {"N": 4, "increasing": True})
case("unravel_index", "numpy.unravel_index", [a((4,), I, "int:0:12")], {"shape": (3, 4)})
case("slogdet", "numpy.slogdet", [a((2, 3, 3), F, "spd")])
case("get_item", "numpy.get_item", [a((3, 4))], {"key": (slice(1, None), 2)})
case("get_item_newaxis", "numpy.get_item", [a((3, 4))], {"key": (None, Ellipsis, slice(None, None, -1))})
case("bincount", "numpy.bincount", [a((6,), I, "int:0:5")], grad=False)
case("bincount_weights", "numpy.bincount", [a((6,), I, "int:0:5"), a((6,), key="weights")], {"minlength": 7})
case("bincount_2d", "numpy.bincount", [a((2, 4), I, "int:0:4")], grad=False)
case("histogram", "numpy.histogram", [a((10,))], {"bins": 4}, grad=False)
case("histogram_range", "numpy.histogram", [a((10,))], {"bins": 3, "range": (-1.0, 1.0)}, grad=False)
case("nonzero", "numpy.nonzero", [a((3, 4), I, "int:0:2")])
case("unique", "numpy.unique", [a((8,), I, "int:0:4")])
case("unique_all", "numpy.unique", [a((8,), I, "int:0:4")],
     {"return_index": True, "return_inverse": True, "return_counts": True})
case("unique_size", "numpy.unique", [a((6,), I, "int:0:3")], {"size": 5, "fill_value": -1})
case("where_one", "numpy.where", [a((2, 3), B, "bool")])
case("size", "numpy.size", [a((2, 3))])
case("ndim", "numpy.ndim", [a((2, 3))])
case("view", "numpy.view", [a((2, 4))], {"dtype": "int32"})
case("array", "numpy.array", [a((2, 3), I, "int:0:5")], {"dtype": "float32"})

# ----------------------------------------------------------------------------- creation
for name, kw in (("zeros", {"shape": (2, 3)}), ("ones", {"shape": (2,), "dtype": "int32"}),
                 ("empty", {"shape": (0, 3)}), ("full", {"shape": (2, 2), "fill_value": 3}),
                 ("identity", {"n": 3}), ("eye", {"N": 2, "M": 3, "k": 1}), ("tri", {"N": 3, "k": -1}),
                 ("arange", {"start": 5}), ("arange", {"start": 1, "stop": 7, "step": 2}),
                 ("arange", {"start": 0.5, "stop": 3}), ("arange", {"start": 0, "stop": 3, "dtype": "float32"}),
                 ("linspace", {"start": 0.0, "stop": 2.0, "num": 5}),
                 ("linspace", {"start": 0, "stop": 2, "num": 4, "endpoint": False, "retstep": True}),
                 ("logspace", {"start": 0.0, "stop": 2.0, "num": 3}),
                 ("logspace", {"start": 0.0, "stop": 3.0, "num": 4, "base": 2, "endpoint": False}),
                 ("geomspace", {"start": 1.0, "stop": 8.0, "num": 4}), ("bartlett", {"x": 5}),
                 ("blackman", {"x": 5}), ("hamming", {"x": 5}), ("hanning", {"x": 4}),
                 ("kaiser", {"x": 5, "beta": 2.0})):
    case(f"{name}_{len([c for c in CASES if c[1] == f'numpy.{name}'])}", f"numpy.{name}", [], kw)
for name in ("zeros_like", "ones_like", "empty_like"):
    case(name, f"numpy.{name}", [a((2, 3))], grad=False)
    case(f"{name}_dtype", f"numpy.{name}", [a((2, 3))], {"dtype": "int32"}, grad=False)
case("full_like", "numpy.full_like", [a((2, 3))], {"fill_value": 2.5})
case("full_like_int", "numpy.full_like", [a((2, 3), I, "int:0:3")], {"fill_value": 2, "dtype": "float32"})

# ----------------------------------------------------------------------------- math
for name in ("segment_sum", "segment_max", "segment_min", "segment_prod"):
    case(name, f"math.{name}", [a((5, 3), F, "spread"), a((5,), I, "int:0:3")], {"num_segments": 4},
         grad=name != "segment_prod")
    case(f"{name}_sorted", f"math.{name}", [a((4,), F, "spread"), a((4,), I, "int:0:1")],
         {"num_segments": 2, "sorted": True}, grad=name != "segment_prod")
case("top_k", "math.top_k", [a((3, 6), F, "spread")], {"k": 2})
case("top_k_1d", "math.top_k", [a((6,), F, "spread")], {"k": 4})
case("in_top_k", "math.in_top_k", [a((3,), I, "int:0:5"), a((3, 5), F, "spread")], {"k": 2})
case("logsumexp_neg_axis", "math.logsumexp", [a((2, 3))], {"axis": -1, "keepdims": True})
case("cdist", "math.cdist", [a((4, 3)), a((5, 3))])
case("cdist_batch", "math.cdist", [a((2, 3, 2)), a((2, 4, 2))])
case("extract_sequences", "math.extract_sequences", [a((2, 10))], {"sequence_length": 4, "sequence_stride": 3})
case("fft", "math.fft", [a((2, 8)), a((2, 8))], lists=(2,))
case("fft2", "math.fft2", [a((2, 4, 4)), a((2, 4, 4))], lists=(2,))
case("ifft2", "math.ifft2", [a((3, 4)), a((3, 4))], lists=(2,))
case("rfft", "math.rfft", [a((2, 8))])
case("rfft_length", "math.rfft", [a((2, 8))], {"fft_length": 6})
case("irfft", "math.irfft", [a((2, 5)), a((2, 5))], lists=(2,))
case("irfft_length", "math.irfft", [a((2, 5)), a((2, 5))], {"fft_length": 8}, lists=(2,))
case("stft", "math.stft", [a((2, 32))], {"sequence_length": 8, "sequence_stride": 4, "fft_length": 16})
case("stft_hamming", "math.stft", [a((32,))],
     {"sequence_length": 8, "sequence_stride": 5, "fft_length": 8, "window": "hamming", "center": False})
case("stft_none", "math.stft", [a((20,))], {"sequence_length": 6, "sequence_stride": 2, "fft_length": 8,
                                           "window": None})
case("istft", "math.istft", [a((2, 9, 9)), a((2, 9, 9))],
     {"sequence_length": 8, "sequence_stride": 4, "fft_length": 16}, lists=(2,))
case("istft_length", "math.istft", [a((5, 5)), a((5, 5))],
     {"sequence_length": 8, "sequence_stride": 3, "fft_length": 8, "length": 12, "window": "hamming",
      "center": False}, lists=(2,))
case("rsqrt", "math.rsqrt", [a((2, 3), F, "positive")], order2=True)
case("erf", "math.erf", [a((2, 3))], order2=True)
case("erfc", "math.erfc", [a((2, 3))])
case("erfinv", "math.erfinv", [a((2, 3), F, "unit")])
case("logdet", "math.logdet", [a((2, 3, 3), F, "spd")], order2=True)
case("view_as_real_roundtrip", "math.view_as_complex", [a((3, 2))], grad=False)

# ----------------------------------------------------------------------------- einops
case("rearrange", "einops.rearrange", [a((2, 3, 4, 2))], {"pattern": "b h w c -> b c h w"})
case("rearrange_split", "einops.rearrange", [a((2, 4, 6, 1))],
     {"pattern": "b (h1 h) (w1 w) c -> (b h1 w1) h w c", "h1": 2, "w1": 3})
case("rearrange_merge", "einops.rearrange", [a((2, 4, 6, 1))],
     {"pattern": "b (h h1) (w w1) c -> b h w (c h1 w1)", "h1": 2, "w1": 2})


def build_ops_model(ops, inputs):
    """The functional model of tests/test_keras_ops_saving.py, built with ``ops`` (Keras's
    keras.ops in fixtures/keras_ops_numpy/make_ops_model.py, minikeras's in the test)."""
    x = ops.add(ops.exp(inputs), 1)
    total = ops.sum(x, axis=-1, keepdims=True)
    values, _ = ops.top_k(inputs, 2)
    mixed = ops.einsum("bi,bj->bij", inputs, values)
    flat = ops.reshape(mixed, (-1, 8))
    soft = ops.softmax(ops.concatenate([total, flat, ops.logsumexp(inputs, axis=1, keepdims=True)], axis=-1))
    first = ops.where(ops.greater(soft, 0.05), soft, ops.zeros_like(soft))
    weights = np.linspace(-1.0, 1.0, 8, dtype="float32").reshape(4, 2)
    mixed = ops.stack([ops.matmul(inputs, weights), ops.split(ops.clip(inputs, -0.5, 0.5), 2, axis=1)[1]], axis=1)
    moved = ops.pad(ops.cumsum(ops.tile(mixed, (1, 1, 2)), axis=-1), ((0, 0), (1, 0), (0, 1)), constant_values=0.5)
    picked = ops.take(ops.repeat(moved, 2, axis=1), [0, 3], axis=2)
    return [first, ops.cast(ops.abs(ops.reshape(picked, (-1, 12))), "float16"), ops.argmax(inputs, axis=-1)]

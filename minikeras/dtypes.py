"""TensorFlow's dtype names, as NumPy dtypes (``mk.float32 == np.float32`` holds)."""
import os
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import floatx, x64_enabled

float16 = np.dtype("float16")
bfloat16 = np.dtype(jnp.bfloat16)
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")  # 32-bit unless 64-bit dtypes are on, as int64
bool = np.dtype("bool")  # noqa: A001 - TF's name
string = np.dtype(object)  # a string Tensor's values: NumPy object arrays of bytes, on the host

DType = np.dtype

WHERE_STRINGS_BELONG = (
    "strings live on the host and cannot enter compiled code (mk.function, the steps of fit/evaluate/"
    "predict) or numeric ops. Do string work in the data pipeline (mk.data.Dataset.map, or Python before "
    "the model), or in a model's leading preprocessing layers (TextVectorization, StringLookup, Hashing), "
    "which run on the host before the compiled part; mk.strings.to_number converts strings to numbers")


def string_refusal(what):
    """The TypeError raised when ``what`` meets a string where only numbers can go."""
    return TypeError(f"{what}: {WHERE_STRINGS_BELONG}.")


def as_dtype(value):
    """Returns the NumPy dtype named by ``value`` (a dtype, a type or a string such as 'float32')."""
    if value is None:
        return None
    if value is string or (isinstance(value, str) and value in ("string", "str")) or value in (str, bytes, object):
        return string
    try:
        return np.dtype(jnp.dtype(value))
    except TypeError:
        raise TypeError(f"Expected a dtype such as 'float32' or mk.int32, received {value!r}") from None


def is_floating(dtype):
    """Whether ``dtype`` is a floating dtype, bfloat16 included (NumPy counts it as kind 'V')."""
    return dtype is not None and np.dtype(dtype) != string and jnp.issubdtype(dtype, jnp.floating)


def dtype_name(dtype):
    """The name Keras 3 writes for ``dtype`` in configs: 'string' for string Tensors' dtype."""
    dtype = as_dtype(dtype)
    return "string" if dtype == string else dtype.name


def canonical_dtype(dtype):
    """float64 -> float32 and int64 -> int32 unless JAX runs with x64 enabled."""
    dtype = np.dtype(dtype)
    if not x64_enabled():
        if dtype == np.float64:
            return _float64_held()
        if dtype == np.int64:
            return np.dtype("int32")
        if dtype == np.uint64:
            return np.dtype("uint32")
        if dtype == np.complex128:
            return np.dtype("complex64")
    return dtype


def _float64_held():
    return np.dtype(floatx()) if floatx() != np.float16 else np.dtype("float32")


def index_dtype():
    """The dtype of TF's int64 results (argmax, argmin, Dataset.range, random.categorical):
    int64 with 64-bit dtypes enabled, int32 otherwise."""
    return np.dtype("int64") if x64_enabled() else np.dtype("int32")


def model_input_dtype(dtype):
    """The dtype fit/evaluate/predict hand a model for NumPy data of ``dtype``: float64 is cut to
    32 bits in both modes, as without 64-bit dtypes (Keras casts float data to ``floatx``); the
    rest as ``canonical_dtype``."""
    dtype = np.dtype(dtype)
    return _float64_held() if dtype == np.float64 else canonical_dtype(dtype)


_LIBRARIES = tuple(os.path.dirname(m.__file__) + os.sep for m in (jax, np))
_MINIKERAS = os.path.dirname(os.path.abspath(__file__)) + os.sep
_warned_64_bit = []


def _caller():
    """The file and line of the first frame outside minikeras, jax and NumPy (the user's line)."""
    frame = sys._getframe(2)
    while frame.f_back is not None and frame.f_code.co_filename.startswith((_MINIKERAS,) + _LIBRARIES):
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno


_warned_narrowing = []


def check_narrowing(array, held):
    """Warns once per process when holding the integer NumPy ``array`` as ``held`` (int32 for
    int64 without 64-bit dtypes) changes a value (``2**40`` would wrap to 0), naming the line."""
    if _warned_narrowing or array.dtype.kind not in "iu" or held.itemsize >= array.dtype.itemsize or not array.size:
        return
    limits = np.iinfo(held)
    low, high = array.min(), array.max()
    if low >= limits.min and high <= limits.max:
        return
    _warned_narrowing.append(True)
    filename, line = _caller()
    wrong = high if high > limits.max else low
    warnings.warn_explicit(
        f"{array.dtype.name} values outside the {held.name} range were given at {filename}:{line} ({wrong} becomes "
        f"{np.asarray(wrong).astype(held)}): minikeras holds {array.dtype.name} as {held.name} unless 64-bit dtypes "
        "are on. Call mk.config.enable_x64() (or set MINIKERAS_ENABLE_X64=1) before any value is made to keep them. "
        "Later narrowings are not warned about again.", UserWarning, filename, line)


def requested_dtype(value):
    """A dtype the user asked for by name (``mk.cast(x, mk.float64)``, ``dtype=mk.int64``), as
    minikeras holds it: ``canonical_dtype(as_dtype(value))`` (None stays None). Without 64-bit
    dtypes, the first 64-bit request of the process warns once, naming the line that made it."""
    dtype = as_dtype(value)
    if dtype is None or dtype is string:
        return dtype
    held = canonical_dtype(dtype)
    if held != dtype and not _warned_64_bit:
        _warned_64_bit.append(True)
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_code.co_filename.startswith((_MINIKERAS,) + _LIBRARIES):
            frame = frame.f_back
        where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
        warnings.warn_explicit(
            f"{dtype.name} was requested at {where} and is {held.name} in minikeras: 64-bit dtypes need "
            "mk.config.enable_x64() (or MINIKERAS_ENABLE_X64=1 in the environment) before any value is made. "
            "Later 64-bit requests become 32-bit without this warning.", UserWarning, frame.f_code.co_filename,
            frame.f_lineno)
    return held


KERAS_DTYPE_NAMES = (
    "float16", "float32", "float64", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
    "bfloat16", "bool", "string", "float8_e4m3fn", "float8_e5m2", "complex64", "complex128",
)
# Keras 3 maps Python's types by backend; minikeras's keras.config.backend() is 'tensorflow'.
_PYTHON_DTYPE_NAMES = {bool: "bool", int: "int64", float: "float32", str: "string", "int": "int64",
                       complex: "complex128"}


def standardize_dtype(dtype):
    """Keras 3's name of ``dtype`` (``keras.utils.standardize_dtype``): one of
    ``KERAS_DTYPE_NAMES``; None is ``floatx()``, Python's ``int``/``float``/``bool``/``str``/
    ``complex`` (and ``"int"``) map as Keras's TensorFlow backend maps them, and
    ``mk.string`` (NumPy's object dtype, which holds minikeras's strings) is ``"string"``.

    >>> standardize_dtype(np.float32), standardize_dtype(int), standardize_dtype(None)
    ('float32', 'int64', 'float32')

    Raises:
        ValueError: ``Invalid dtype: <name>`` for anything else, as Keras.
    """
    if dtype is None:
        return floatx().name
    if isinstance(dtype, np.dtype) and dtype == string:
        return "string"
    try:
        dtype = _PYTHON_DTYPE_NAMES.get(dtype, dtype)
    except TypeError:  # an unhashable value: no dtype either
        pass
    if hasattr(dtype, "name"):
        dtype = dtype.name
    elif hasattr(dtype, "__name__"):
        dtype = dtype.__name__
    elif "jax.numpy" in str(dtype):
        dtype = str(dtype).split(".")[-1]
    if not isinstance(dtype, str) or dtype not in KERAS_DTYPE_NAMES:
        raise ValueError(f"Invalid dtype: {dtype}")
    return dtype

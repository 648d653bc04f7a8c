"""TensorFlow's dtype names, as NumPy dtypes (``mk.float32 == np.float32`` holds)."""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import floatx

float16 = np.dtype("float16")
bfloat16 = np.dtype(jnp.bfloat16)
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint32 = np.dtype("uint32")
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


def canonical_dtype(dtype):
    """float64 -> float32 and int64 -> int32 unless JAX runs with x64 enabled."""
    dtype = np.dtype(dtype)
    if not jax.config.jax_enable_x64:
        if dtype == np.float64:
            return np.dtype(floatx()) if floatx() != np.float16 else np.dtype("float32")
        if dtype == np.int64:
            return np.dtype("int32")
        if dtype == np.uint64:
            return np.dtype("uint32")
        if dtype == np.complex128:
            return np.dtype("complex64")
    return dtype

"""The pure jax forwards of ``keras.ops.numpy`` that are more than one ``jnp`` call: each
computes what Keras 3's JAX backend computes (its casts and result dtypes), as a function of
arrays, for ``numpy_call.run``. Module-level functions, so each op's compiled programs are kept."""
import jax.numpy as jnp


def is_inexact(x):
    return jnp.issubdtype(x.dtype, jnp.inexact)


def to_float(fn):
    """``fn`` on ``x`` cast to floatx first when ``x`` is an integer or bool (Keras's rule for
    the transcendental ops: ``result_type(x.dtype, float)``)."""
    def forward(x, *, floatx):
        return fn(x if is_inexact(x) else x.astype(floatx))
    forward.__name__ = fn.__name__
    return forward


def int64_to_float(fn):
    """``fn`` on ``x``, an int64 ``x`` cast to floatx first (jnp promotes the other ints)."""
    def forward(x, **params):
        floatx = params.pop("floatx")
        return fn(x.astype(floatx) if x.dtype == jnp.int64 else x, **params)
    forward.__name__ = fn.__name__
    return forward


def both_to_float(fn):
    """``fn(x1, x2)`` with both cast to their result dtype, floatx where that is not a float."""
    def forward(x1, x2, *, floatx):
        dtype = jnp.result_type(x1, x2)
        if not jnp.issubdtype(dtype, jnp.inexact):
            dtype = floatx
        return fn(x1.astype(dtype), x2.astype(dtype))
    forward.__name__ = fn.__name__
    return forward


_WRAPPED = {}


def with_params(fn):
    """``fn(*arrays, **params)``: one object per ``jnp`` function (made once, kept), so that an
    op's compiled programs are found again on the next call (``jax_forward``'s key holds it)."""
    forward = _WRAPPED.get(fn)
    if forward is None:
        def forward(*arrays, **params):
            return fn(*arrays, **params)
        forward.__name__ = getattr(fn, "__name__", "forward")
        if len(_WRAPPED) < 1024:  # vectorize's functions are new each time: not kept beyond a bound
            _WRAPPED[fn] = forward
    return forward


def sequence(fn):
    """``fn`` taking one sequence of arrays (``jnp.concatenate([...])``), called with them as
    separate arguments; a list result (``jnp.split``) is returned as a tuple."""
    def forward(*arrays, **params):
        return fn(arrays, **params)
    forward.__name__ = fn.__name__
    return forward


def tuple_out(fn):
    def forward(*arrays, **params):
        return tuple(fn(*arrays, **params))
    forward.__name__ = fn.__name__
    return forward


def matmul(x1, x2):
    int8 = x1.dtype == jnp.int8 and x2.dtype == jnp.int8
    return jnp.matmul(x1, x2, preferred_element_type="int32" if int8 else None)


def einsum(*operands, subscripts):
    int8 = {x.dtype for x in operands} == {jnp.dtype("int8")}
    return jnp.einsum(subscripts, *operands, preferred_element_type="int32" if int8 else None)


def mean(x, *, axis, keepdims):
    compute = jnp.result_type(x.dtype, jnp.float32) if not is_inexact(x) else jnp.promote_types(x.dtype, jnp.float32)
    result = compute if not is_inexact(x) else x.dtype
    return jnp.mean(x, axis=axis, keepdims=keepdims, dtype=compute).astype(result)


def var(x, *, axis, keepdims, floatx):
    compute = jnp.promote_types(x.dtype, jnp.float32) if is_inexact(x) else jnp.dtype(floatx)
    result = x.dtype if is_inexact(x) else jnp.dtype(floatx)
    return jnp.var(x, axis=axis, keepdims=keepdims, dtype=compute).astype(result)


def average(x, *weights, axis, floatx):
    dtype = jnp.result_type(x, *weights)
    if not jnp.issubdtype(dtype, jnp.inexact):
        dtype = floatx
    return jnp.average(x.astype(dtype), weights=weights[0].astype(dtype) if weights else None, axis=axis)


def _arg_extreme(fn):
    def forward(x, *, axis, keepdims):
        if not jnp.issubdtype(x.dtype, jnp.floating) or x.ndim == 0:
            return fn(x, axis=axis, keepdims=keepdims)
        x = x.astype(jnp.promote_types(x.dtype, jnp.float32))
        # On the CPU Keras makes -0.0 smaller than 0.0, so that ties break as other backends
        x = jnp.where((x == 0.0) & jnp.signbit(x), -jnp.finfo(x.dtype).tiny, x)
        return fn(x, axis=axis, keepdims=keepdims)
    forward.__name__ = fn.__name__
    return forward


argmax = _arg_extreme(jnp.argmax)
argmin = _arg_extreme(jnp.argmin)


def count_nonzero(x, *, axis):
    return jnp.count_nonzero(x, axis=axis).astype("int32")


def clip(x, x_min, x_max):
    if x.dtype == jnp.bool_:
        x = x.astype("int32")
    return jnp.clip(x, x_min, x_max)


def divide_no_nan(x1, x2):
    safe = jnp.where(x2 == 0, 1, x2)
    return jnp.where(x2 == 0, 0, jnp.divide(x1, safe))


def i0(x, *, floatx):
    dtype = x.dtype.name
    if dtype in ("int64", "float64"):
        dtype = "float64"
    elif dtype not in ("bfloat16", "float16"):
        dtype = floatx
    return jnp.i0(x.astype(dtype))


def round_(x, *, decimals, floatx):
    if jnp.issubdtype(x.dtype, jnp.integer) and decimals < 0:
        factor = jnp.asarray(10.0 ** decimals, floatx)
        return (jnp.round(x.astype(floatx) * factor) / factor).astype(x.dtype)
    return jnp.round(x, decimals=decimals)


def trunc(x):
    if not is_inexact(x):
        return x
    return jnp.trunc(x)


def median(x, *, axis, keepdims, floatx):
    if x.dtype == jnp.int64:
        x = x.astype(floatx)
    result = jnp.median(x, axis=axis, keepdims=keepdims)
    if keepdims and axis is None:
        result = result.reshape((1,) * x.ndim)
    return result


def quantile(x, q, *, axis, method, keepdims, floatx):
    if x.dtype == jnp.int64:
        x = x.astype(floatx)
    result = jnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims)
    if keepdims and axis is None:
        result = result.reshape(result.shape + (1,) * (x.ndim + q.ndim - result.ndim))
    return result


def pad(x, *constant, pad_width, mode):
    if constant:
        return jnp.pad(x, pad_width, mode=mode, constant_values=constant[0])
    return jnp.pad(x, pad_width, mode=mode)


def where(condition, x1, x2):
    return jnp.where(condition, x1, x2)


def select(*arrays, n):
    return jnp.select(arrays[:n], arrays[n:2 * n], default=arrays[2 * n])


def trapezoid(y, *x, dx, axis):
    return jnp.trapezoid(y, x[0] if x else None, dx=dx, axis=axis)


def bincount(x, *weights, length):
    w = weights[0] if weights else None
    if x.ndim == 2:
        return jnp.stack([jnp.bincount(x[i], weights=None if w is None else w[i], length=length)
                          for i in range(x.shape[0])])
    return jnp.bincount(x, weights=w, length=length)


def histogram(x, *, bins, range):  # noqa: A002 (NumPy's name)
    return jnp.histogram(x, bins=bins, range=range)


def window(fn):
    def forward(*, length, floatx, **params):
        return fn(length, **params).astype(floatx)
    forward.__name__ = fn.__name__
    return forward


def get_item(x, *arrays, key):
    """``x[key]``, ``key`` with its array entries taken from ``arrays`` in order (``key``
    holds ``None`` placeholders for them as the string "array")."""
    arrays = iter(arrays)
    entries = tuple(next(arrays) if k == "__array__" else k for k in key)
    return x[entries]


def view(x, *, dtype):
    return x.view(dtype)


def view_as_complex(x):
    return x[..., 0].astype("complex64") + 1j * x[..., 1].astype("complex64")


def view_as_real(x):
    return jnp.stack((jnp.real(x), jnp.imag(x)), axis=-1)

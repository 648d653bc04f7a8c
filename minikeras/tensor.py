"""Tensor (an immutable wrapper of one jax.Array) and Variable (mutable state).

Operators (``+``, ``@``, ``[]``, comparisons, ...) are installed on both classes by
``minikeras.ops.operators`` so that this file holds only the data types.
"""
import itertools
import math
import sys

import jax
import jax.numpy as jnp
import numpy as np

from minikeras import _context
from minikeras.backend import floatx, folding_constants, is_tracer, static_shape, x64_enabled
from minikeras.dtypes import as_dtype, canonical_dtype, check_narrowing, requested_dtype, string_refusal
from minikeras.symbolic import KerasTensor, SymbolicInput


def to_array(value, dtype=None):
    """Returns the jax array behind ``value`` (Tensor, Variable, array, number or nested list).

    Python floats (also in lists) become ``floatx()`` (float32) and Python ints int32, as in
    TensorFlow; NumPy float64 and int64 stay 64-bit with 64-bit dtypes on
    (``mk.config.enable_x64()``) and are float32 / int32 otherwise. A 64-bit ``dtype`` without
    them is 32-bit (``dtypes.requested_dtype``: one warning per process).
    """
    if dtype is not None and np.dtype(dtype).itemsize == 8 and not x64_enabled():
        dtype = requested_dtype(dtype)
    if isinstance(value, Tensor):
        array = value._value
        if isinstance(array, np.ndarray) and array.dtype == object:  # a string Tensor (minikeras.string_tensor)
            raise string_refusal("A string mk.Tensor (dtype string) was given where numbers are expected")
    elif isinstance(value, Variable):  # inside a mixed-precision layer, read as cast (see Variable.value)
        array = value._read_array() if _context.call_state.autocast is None else value.value()._value
    elif isinstance(value, jax.Array):
        array = value
    else:
        kind = type(value)
        if kind is float or kind is int or kind is bool:
            return python_scalar(value, dtype)
        if kind is KerasTensor:  # an op catches this and records a graph node instead
            raise SymbolicInput(value)
        literal = False
        if isinstance(value, (list, tuple)):
            literal = all(type(v) in _LITERALS for v in value)  # Python numbers: int32 / floatx as in TF
            value = np.asarray([np.asarray(to_array(v)) if isinstance(v, (Tensor, Variable)) else v
                                for v in value])
        np_value = np.asarray(value)
        held = canonical_dtype(np_value.dtype)
        check_narrowing(np_value, held)
        if literal and held.itemsize == 8 and held.kind in "if":
            held = np.dtype(np.int32) if held.kind == "i" else floatx()
        if np_value.dtype.kind in "SU" or (np_value.dtype == object and np_value.size
                                           and isinstance(np_value.flat[0], (str, bytes))):
            raise string_refusal(f"Strings {_short(value)} were given where numbers are expected")
        if np_value.dtype == object:
            raise TypeError(f"Cannot convert {value!r} of type {type(value).__name__} to a Tensor")
        # a constant, also in a trace with symbolic sizes (see backend.folding_constants)
        if _context.call_state.traces:
            with jax.ensure_compile_time_eval():
                array = jnp.asarray(np_value, dtype=held)
        else:
            array = jnp.asarray(np_value, dtype=held)
    if dtype is not None and array.dtype != dtype:
        if _context.call_state.traces:
            with folding_constants(array):
                return array.astype(dtype)
        array = array.astype(dtype)
    return array


_LITERALS = (int, float, bool, list, tuple)


def device_name(array):
    """TF's full name of the device holding a jax array ('' for a tracer)."""
    if is_tracer(array):
        return ""
    device = next(iter(array.devices()))
    return f"/job:localhost/replica:0/task:{device.process_index}/device:{device.platform.upper()}:{device.id}"


def check_compatible(shape, wanted):
    """Raises TF's ValueError unless ``wanted`` (a shape with None sizes, or None) fits ``shape``."""
    if wanted is None:
        return
    wanted = tuple(None if d is None else int(d) for d in (wanted.as_list() if hasattr(wanted, "as_list")
                                                          else wanted))
    if len(wanted) != len(shape) or any(w is not None and d is not None and w != d for d, w in zip(shape, wanted)):
        raise ValueError(f"Tensor's shape {tuple(shape)} is not compatible with supplied shape {wanted}.")


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_SCALARS = {}        # (value, dtype, sign) -> jax array: Python constants are converted once
_SCALARS_MAX = 4096


def python_scalar(value, dtype=None):
    """A Python bool/int/float as a jax array (bool, int32 and float32 by default), cached.

    ``jnp.asarray(0.5)`` costs more than a small op; eager code multiplies by the same
    constants over and over, so each (value, dtype) is converted once.
    """
    kind = type(value)
    if dtype is None:
        dtype = floatx() if kind is float else (np.dtype(np.bool_) if kind is bool else np.dtype(np.int32))
    key = (kind, value, dtype, math.copysign(1.0, value) if kind is float else 0)
    array = _SCALARS.get(key)
    if array is None:
        with jax.ensure_compile_time_eval():  # a constant, never a tracer, even inside a trace
            array = jnp.asarray(value, dtype=dtype)
        if is_tracer(array):
            return array
        if len(_SCALARS) >= _SCALARS_MAX:
            _SCALARS.clear()
            _SCALAR_IDS.clear()
        _SCALARS[key] = array
        _SCALAR_IDS.add(id(array))
    return array


_SCALAR_IDS = set()


def _own(array):
    """A Variable never holds a cached constant: its buffer may be donated to a compiled update."""
    if array.ndim == 0 and id(array) in _SCALAR_IDS and not is_tracer(array):
        return jnp.array(array, copy=True)
    return array


def _format_value(array):
    if is_tracer(array):
        return "<traced>"
    np_value = np.asarray(array)
    if np_value.ndim == 0:
        return str(np_value[()])
    return np.array2string(np_value, separator=" ")


_INSIDE = ("minikeras", "jax", "jaxlib", "numpy")  # packages that compute with symbolic sizes


def _called_from_outside(frame):
    """Whether ``frame`` runs user code: a module outside minikeras and the libraries it
    computes with."""
    package = (frame.f_globals.get("__name__") or "").partition(".")[0]
    return package not in _INSIDE


class _Described:
    """shape, dtype, ndim and size of the array in ``self._value`` (shared by Tensor and Variable)."""

    __slots__ = ()

    @property
    def shape(self):
        """The static shape. Inside ``mk.function`` traced once for a ``None`` dimension of its
        input signature, that size is known only when the program runs: user code sees None
        there, as in TensorFlow (``mk.shape(x)`` gives the size as a Tensor), while minikeras's
        own ops see jax's symbolic size, which they compute with (``reshape``, gradients)."""
        shape = tuple(self._value.shape)
        traced = _context.call_state.traces
        if traced and not all(type(d) is int for d in shape) and _called_from_outside(sys._getframe(1)):
            return static_shape(shape)
        return shape

    @property
    def dtype(self):
        return np.dtype(self._value.dtype)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def size(self):
        """The number of elements; for a symbolic shape (see ``shape``) None in user code and
        jax's symbolic size in minikeras's ops."""
        shape = self._value.shape
        if _context.call_state.traces and not all(type(d) is int for d in shape):
            return None if _called_from_outside(sys._getframe(1)) else math.prod(shape)
        return int(np.prod(shape, dtype=np.int64))


class Tensor(_Described):
    """An immutable n-dimensional array, the value that ops take and return.

    Wraps one ``jax.Array`` (or a tracer inside ``mk.function``). Tensors are made by ops and
    by ``mk.constant``; users rarely call this constructor.

    >>> mk.constant(6.0)
    mk.Tensor(6.0, shape=(), dtype=float32)
    """

    # ``_keras_mask``: the mask a layer's output carries (Keras's attribute; unset means None)
    __slots__ = ("_value", "_keras_mask", "__weakref__")
    __array_priority__ = 100  # make ``np.ndarray + Tensor`` call Tensor.__radd__

    def __init__(self, value):
        self._value = value

    # -- description -------------------------------------------------------------------

    @property
    def device(self):
        """TF's name of the device holding this tensor's value,
        '/job:localhost/replica:0/task:0/device:CPU:0'; '' for a traced Tensor (TF's graph
        tensors say the same)."""
        return device_name(self._value)

    def set_shape(self, shape):
        """Checks that ``shape`` (None for any size, or None for any rank) is compatible with
        this Tensor's shape, as TF's eager ``set_shape``.

        Raises:
          ValueError: the shapes differ in rank or in a known size.
        """
        check_compatible(static_shape(self._value.shape), shape)

    def __repr__(self):
        text = _format_value(self._value)
        sep = "\n" if "\n" in text else ""
        return f"mk.Tensor({sep}{text}, shape={static_shape(self._value.shape)}, dtype={self.dtype.name})"

    __str__ = __repr__

    # -- NumPy and Python interop --------------------------------------------------------
    def numpy(self):
        """Returns the value as a NumPy array (a copy); only outside ``mk.function``."""
        self._check_concrete("numpy()")
        return np.array(self._value)

    def __array__(self, dtype=None, copy=None):
        self._check_concrete("conversion to a NumPy array")
        array = np.asarray(self._value)
        return array.astype(dtype) if dtype is not None else array

    def _check_concrete(self, what):
        if is_tracer(self._value):
            raise TypeError(
                f"{what} needs a concrete value, but this mk.Tensor of shape {self.shape} is traced "
                "inside mk.function; return it from the function and read it outside")

    def _scalar(self, what):
        if is_tracer(self._value):
            raise TypeError(
                f"Using a traced mk.Tensor as a Python {what} is not allowed inside mk.function: its "
                "value is unknown while tracing. Use mk.cond(pred, true_fn, false_fn) for branches, "
                "or mk.where for elementwise selection.")
        if self._value.size != 1:
            raise ValueError(
                f"The truth value / Python {what} of a mk.Tensor with shape {self.shape} is ambiguous; "
                "only tensors with one element convert (use mk.reduce_any / mk.reduce_all)")
        return np.asarray(self._value).reshape(())[()]

    def __bool__(self):
        return bool(self._scalar("bool"))

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __index__(self):
        if not jnp.issubdtype(self.dtype, jnp.integer):
            raise TypeError(f"Only integer mk.Tensors can be used as an index, this one is {self.dtype.name}")
        return int(self._scalar("int"))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __format__(self, spec):
        if is_tracer(self._value):
            return format(repr(self), spec)
        if self._value.ndim == 0:
            return format(np.asarray(self._value)[()].item(), spec)
        return format(np.asarray(self._value), spec)  # NumPy's rules, as tf.Tensor

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of a scalar mk.Tensor (shape ())")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar mk.Tensor (shape ())")
        for i in range(self._value.shape[0]):
            yield self[i]

    __hash__ = None  # ``==`` is elementwise, as in TensorFlow 2; use ``ref()`` as a dict key

    def ref(self):
        """A hashable reference to this object (``tf.Tensor.ref``), for sets and dict keys."""
        return _Ref(self)

    def __jax_array__(self):
        return self._value


class _Ref:
    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self):
        return id(self._obj)

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._obj is self._obj


_variable_counter = itertools.count()


def in_creation_order(variables):
    """``variables`` sorted in the order they were created: the order of weights files,
    optimizer slots and ``Module.variables``."""
    return sorted(variables, key=_creation_index)


def _creation_index(variable):
    return variable._uid


_NOT_SEEN = object()


def never_donate(variable):
    """Marks ``variable`` as state whose buffer compiled steps never donate (they get a copy,
    ``Variable._array_to_donate``), and returns it: for small state that other threads read and
    write while steps run, such as a random generator's (an augmentation layer drawing in a
    ``Dataset.map`` thread while ``fit``'s step, with a Dropout, advances the same generator)."""
    variable._shared = True
    return variable


class Variable(_Described):
    """Mutable state: a named, shaped value that ``assign`` changes in place.

    Args:
      initial_value: a Tensor, array, number, or a zero-argument callable returning one
        (callables are evaluated eagerly, also inside ``mk.function``).
      trainable: whether ``GradientTape`` watches it automatically when read.
      name: a name for error messages and weights files.
      dtype: converts ``initial_value`` to this dtype.
      constraint: a function of the variable's value (``keras.constraints``) whose result the
        optimizers assign to it after each update.

    >>> v = mk.Variable(1.0)
    >>> v.assign_add(2.0).numpy()
    3.0
    """

    __slots__ = ("_stored", "_donatable", "_shared", "trainable", "constraint", "name", "path", "_uid", "__weakref__")

    @property
    def _value(self):
        """The array this thread sees: the stored one, or while this thread traces an
        ``mk.function`` that read it, the trace's value (``_context.variable_seen_as``)."""
        if _context.threads_seeing_variable_values:
            seen = _context.call_state.variable_values.get(id(self), _NOT_SEEN)
            if seen is not _NOT_SEEN:
                return seen
        return self._stored

    @_value.setter
    def _value(self, value):
        if _context.threads_seeing_variable_values:
            state = _context.call_state
            if state.stateless_scopes:  # keras.StatelessScope: the write is collected, not stored
                state.stateless_scopes[-1].add_update((self, value))
            values = state.variable_values
            if id(self) in values:
                values[id(self)] = value
                return
        self._stored = value
        self._donatable = False  # an array from anywhere: others may hold it (see _store_result)
    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, shape=None, constraint=None):
        if initial_value is None:
            raise ValueError("mk.Variable needs an initial_value (a tensor, array, number or callable)")
        if callable(initial_value):
            with jax.ensure_compile_time_eval():
                initial_value = initial_value()
        if dtype is not None:
            dtype = as_dtype(dtype)
        value = to_array(initial_value, dtype)
        if is_tracer(value):
            raise ValueError(
                f"mk.Variable {name or ''!s} was created inside mk.function from a traced value. "
                "Create Variables from concrete values or pass a callable initial_value "
                "(e.g. lambda: initializer(shape)), which is evaluated eagerly.")
        if shape is not None and tuple(shape) != tuple(value.shape):
            raise ValueError(f"mk.Variable {name!r}: shape {tuple(shape)} given, but initial_value has shape "
                             f"{tuple(value.shape)}")
        self._stored = _own(value)  # a new Variable: no trace or StatelessScope has a value for it yet
        self._donatable = False
        self._shared = False  # never_donate
        self.trainable = bool(trainable)
        self.constraint = constraint  # applied by optimizers after each update, as TF's and Keras's
        self.name = name or "Variable"
        scope = _context.name_scope_path()  # keras.name_scope's blocks
        self.path = f"{scope}/{self.name}" if scope else self.name
        self._uid = next(_variable_counter)
        traces = _context.call_state.traces
        if traces:
            traces[-1].on_create(self)

    @property
    def dtype(self):
        """The value's dtype; inside a mixed-precision layer's call, the dtype ``value()`` casts
        a float Variable to (as Keras 3's variables report it)."""
        dtype = np.dtype(self._value.dtype)
        autocast = _context.call_state.autocast
        return dtype if autocast is None else autocast.dtype_of(self, dtype)

    @property
    def device(self):
        """TF's name of the device holding this Variable's value (see ``Tensor.device``)."""
        return device_name(self._value)

    # -- reading ------------------------------------------------------------------------
    def _read_array(self):
        traces = _context.call_state.traces
        if traces:
            traces[-1].on_read(self)
        return self._value

    def value(self):
        """Returns the current value as a Tensor, and tells each recording tape of the read
        (``tape.read_variable``: it watches a trainable Variable and records the read). Inside a
        mixed-precision layer's call, a float value comes cast to the layer's compute dtype
        (``_context.call_state.autocast``), as Keras 3's autocast scope does."""
        state = _context.call_state
        if state.traces:
            state.traces[-1].on_read(self)
        out = Tensor(self._value)
        for tape in state.tapes:
            tape.read_variable(self, out)
        autocast = state.autocast
        if autocast is not None:
            out = autocast.maybe_cast(self, out)
        return out

    read_value = value

    def numpy(self):
        """Returns the current value as a NumPy array (a copy)."""
        return self.value().numpy()

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value(), dtype=dtype)

    def __jax_array__(self):
        return self._read_array()


    def __repr__(self):
        if is_tracer(self._value):
            numpy_text = "<traced>"
        else:
            np_value = np.asarray(self._value)
            numpy_text = str(np_value[()]) if np_value.ndim == 0 else repr(np_value)
            if "\n" in numpy_text:
                numpy_text = "\n" + numpy_text
        return f"<mk.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, numpy={numpy_text}>"

    # -- the state of compiled programs (programs.Program, steps_per_execution) ---------------
    def _store_result(self, array):
        """Stores ``array``, a new value that a compiled program has just returned (a buffer no
        one else has seen), so that the next compiled step may donate it (``_array_to_donate``)."""
        self._value = array
        if self._stored is array and not self._shared:
            self._donatable = True

    def _array_to_donate(self):
        """The value to pass to a compiled step that donates it (overwrites its buffer in place).

        The stored array itself when that is safe: a compiled program wrote it
        (``_store_result``) and no Python object but this Variable references it (no Tensor from
        ``value()``, no array from ``jnp.asarray(v)``, no tape's record of a read). Otherwise a
        copy, so that whoever holds the array keeps its values; the step's result replaces it
        here either way. (A NumPy view of the buffer, from ``np.asarray``, is no reference to the
        array: jax does not donate a buffer a view uses, and copies it instead.)"""
        array = self._value
        # three references: the slot, ``array`` and getrefcount's argument
        if self._donatable and array is self._stored and sys.getrefcount(array) == 3:
            return array
        if is_tracer(array):
            return array  # called inside another trace: jax ignores donation there
        return jax.device_put(array, array.sharding, may_alias=False)

    # -- writing ------------------------------------------------------------------------
    def assign(self, value, read_value=True):
        """Replaces the value; the shape must match, and a Tensor's dtype too (numbers and
        arrays are converted to the variable's dtype)."""
        array = self._converted(value, "assign")
        if tuple(array.shape) != tuple(self._value.shape):
            raise ValueError(
                f"Cannot assign a value of shape {tuple(array.shape)} to mk.Variable '{self.name}' of shape "
                f"{self.shape}")
        traces = _context.call_state.traces
        if traces:
            traces[-1].on_assign(self)
        elif is_tracer(array):
            raise ValueError(
                f"Cannot assign a traced value to mk.Variable '{self.name}' outside mk.function "
                "(was a value leaked out of jax.jit/vmap?)")
        self._value = _own(array)
        return self if read_value else None

    def assign_add(self, delta, read_value=True):
        """Adds ``delta`` (of the variable's shape) to the value in place."""
        return self.assign(self._read_array() + self._delta(delta, "assign_add"), read_value)

    def assign_sub(self, delta, read_value=True):
        """Subtracts ``delta`` (of the variable's shape) from the value in place."""
        return self.assign(self._read_array() - self._delta(delta, "assign_sub"), read_value)

    def _delta(self, delta, what):
        array = self._converted(delta, what)
        if tuple(array.shape) != tuple(self._value.shape):
            raise ValueError(
                f"mk.Variable '{self.name}'.{what}: cannot update a variable of shape {self.shape} using a value of "
                f"shape {tuple(array.shape)}; shapes must be equal")
        return array

    def _converted(self, value, what):
        """``value`` as an array of this variable's dtype, with TensorFlow's conversion rules."""
        dtype = self._value.dtype
        if isinstance(value, (Tensor, Variable)):
            if value.dtype != dtype:
                raise ValueError(
                    f"mk.Variable '{self.name}'.{what}: Tensor conversion requested dtype {np.dtype(dtype).name} "
                    f"for Tensor with dtype {value.dtype.name}; cast it first with mk.cast(value, "
                    f"mk.{np.dtype(dtype).name})")
            return to_array(value)
        if type(value) is float and np.dtype(dtype).kind in "biu":
            raise TypeError(f"mk.Variable '{self.name}'.{what}: cannot convert {value!r} to EagerTensor of dtype "
                            f"{np.dtype(dtype).name}")
        return to_array(value, dtype)

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError(f"len() of a scalar mk.Variable '{self.name}' (shape ())")
        return self._value.shape[0]

    def __bool__(self):
        return bool(self.value())

    def __float__(self):
        return float(self.value())

    def __int__(self):
        return int(self.value())

    def __format__(self, spec):
        return format(self.value(), spec)

    def __iter__(self):
        return iter(self.value())

    __hash__ = object.__hash__  # Variables are used as dict keys (optimizer slots)

    def ref(self):
        return _Ref(self)

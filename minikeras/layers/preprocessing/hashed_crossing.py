"""``HashedCrossing``: crosses scalar features into ``num_bins`` bins by TensorFlow's ``cross_hashed``, on the host."""
import numpy as np

from minikeras.layers.preprocessing.encoding import encode
from minikeras.layers.preprocessing.hash_strings import fingerprints
from minikeras.layers.preprocessing.host_layer import HostLayer, as_input_tensor, host_array, out_tensor
from minikeras.saving.registry import register_builtin
from minikeras.symbolic import KerasTensor, Node
from minikeras.tensor import Tensor, Variable

# TensorFlow's sparse_cross_op: the hash key cross_hashed starts from, and FingerprintCat64's multiplier
_HASH_KEY = np.uint64(0xDECAFCAFFE)
_MUL = np.uint64(0xC6A4A7935BD1E995)
_SHIFT = np.uint64(47)


def _shift_mix(value):
    return value ^ (value >> _SHIFT)


def _fingerprint_cat(fp1, fp2):
    """TensorFlow's ``FingerprintCat64`` on uint64 arrays (products wrap modulo 2**64, as in C++)."""
    result = fp1 ^ _MUL
    result ^= _shift_mix(fp2 * _MUL) * _MUL
    result *= _MUL
    result = _shift_mix(result) * _MUL
    return _shift_mix(result)


def _feature_hashes(array):
    """A feature's per-row hashes as ``cross_hashed`` takes them: strings by FarmHash
    Fingerprint64, integers as their int64 value's bits."""
    flat = array.reshape(-1)
    if array.dtype == object:
        return fingerprints(flat.tolist())
    return flat.astype(np.int64).view(np.uint64)


def cross_hashed_bins(arrays, num_bins):
    """The bin of each row's cross of the features ``arrays`` (equal shapes): TensorFlow's
    ``tf.sparse.cross_hashed(..., num_buckets=num_bins)`` for one value per feature and row."""
    with np.errstate(over="ignore"):
        hashed = np.full(arrays[0].size, _HASH_KEY, np.uint64)
        for array in arrays:
            hashed = _fingerprint_cat(hashed, _feature_hashes(array))
    return (hashed % np.uint64(num_bins)).astype(np.int64).reshape(arrays[0].shape)


@register_builtin("minikeras.layers")
class HashedCrossing(HostLayer):
    """Crosses categorical features with the hashing trick, as Keras 3's ``HashedCrossing``:
    ``hash(concatenate(features)) % num_bins``, the bins TensorFlow's ``cross_hashed`` gives
    (Keras calls it on every backend, so Keras on JAX and on TensorFlow agree, and so does this).

        mk.layers.HashedCrossing(num_bins=5)((np.array(["A", "B", "A", "B", "A"]),
                                              np.array([101, 101, 101, 102, 102])))   # [1 4 1 1 3]

    Call it on a list or tuple of at least two features of equal shape ``()``, ``(batch,)`` or
    ``(batch, 1)``, each integers or strings (``pip install 'minikeras[text]'`` for strings).

    Args:
      num_bins: the number of bins.
      output_mode: 'int' (the bin indices; int32, as Keras on JAX, or int64 with x64 enabled)
        or 'one_hot' (float32 vectors of ``num_bins``; a last axis of 1 is replaced).
      sparse: False only.
    """

    def __init__(self, num_bins, output_mode="int", sparse=False, name=None, dtype=None, **kwargs):
        if output_mode == "int" and dtype is None:
            dtype = "int64"
        super().__init__(name=name, dtype=dtype, **kwargs)
        if sparse:
            raise ValueError("`sparse=True` can only be used with the TensorFlow backend.")
        if output_mode not in ("int", "one_hot"):
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of ('int', 'one_hot'). "
                             f"Received: output_mode={output_mode}")
        if isinstance(num_bins, bool) or not isinstance(num_bins, (int, np.integer)) or num_bins <= 0:
            raise ValueError(f"HashedCrossing '{self.name}': `num_bins` must be a positive integer. Received: "
                             f"num_bins={num_bins!r}")
        self.num_bins = int(num_bins)
        self.output_mode = output_mode
        self.sparse = sparse

    def _check_features(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"`HashedCrossing` should be called on a list or tuple of inputs. Received: "
                             f"inputs={inputs}")
        if len(inputs) < 2:
            raise ValueError(f"`HashedCrossing` should be called on at least two inputs. Received: inputs={inputs}")

    def _convert_inputs(self, inputs):
        self._check_features(inputs)
        # NumPy features stay NumPy: int64 values keep their 64 bits (a Tensor holds int32 without x64)
        return [as_input_tensor(x) if isinstance(x, (Tensor, Variable)) else host_array(x) for x in inputs]

    def _symbolic_call(self, inputs, args, training, kwargs):
        self._check_features(inputs)
        self.built = True
        shapes = tuple(tuple(x.shape) for x in inputs)
        shape = tuple(self.compute_output_shape(shapes))
        outputs = KerasTensor(shape, self.output_dtype)
        nodes = self._inbound_nodes()
        nodes.append(Node(self, (inputs,) + tuple(args), kwargs, outputs, index=len(nodes)))
        self._output_shape = shape
        return outputs

    def call(self, inputs):
        arrays = [host_array(x) for x in inputs]
        first = arrays[0].shape
        if len(first) > 2 or (len(first) == 2 and first[-1] != 1):
            raise ValueError("All `HashedCrossing` inputs should have shape `()`, `(batch_size)` or "
                             f"`(batch_size, 1)`. Received: shapes {[a.shape for a in arrays]}")
        if any(a.shape != first for a in arrays[1:]):
            raise ValueError(f"All `HashedCrossing` inputs should have equal shape. Received: shapes "
                             f"{[a.shape for a in arrays]}")
        for a in arrays:
            if a.dtype != object and a.dtype.kind not in "iu":
                raise ValueError("All `HashedCrossing` inputs should have an integer or string dtype. Received: "
                                 f"dtypes {[str(b.dtype) if b.dtype != object else 'string' for b in arrays]}")
        bins = cross_hashed_bins(arrays, self.num_bins)
        if self.output_mode == "int":
            return out_tensor(bins)
        return out_tensor(encode(bins, "one_hot", self.num_bins, f"HashedCrossing '{self.name}'"))

    def compute_output_shape(self, input_shape):
        if (len(input_shape) != 2 or not isinstance(input_shape[0], tuple)
                or not isinstance(input_shape[1], tuple)):
            raise ValueError(f"Expected as input a list/tuple of 2 tensors. Received input_shape={input_shape}")
        if input_shape[0][-1:] != input_shape[1][-1:]:
            raise ValueError(f"Expected the two input tensors to have identical shapes. Received "
                             f"input_shape={input_shape}")
        first = tuple(input_shape[0])
        if self.output_mode == "int":
            return first
        if not first or first[-1] != 1:
            return first + (self.num_bins,)
        return first[:-1] + (self.num_bins,)

    def get_config(self):
        """Keras 3's keys, the dtype as a name (not a policy), no ``trainable``."""
        return {"num_bins": self.num_bins, "output_mode": self.output_mode, "sparse": self.sparse, "name": self.name,
                "dtype": self.dtype_policy.variable_dtype}

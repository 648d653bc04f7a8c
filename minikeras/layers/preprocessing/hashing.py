"""``Hashing``: strings or integers to ``num_bins`` buckets by FarmHash Fingerprint64 (or keyed
SipHash-2-4 with a ``salt``), on the host."""
import numpy as np

from minikeras.layers.preprocessing.encoding import encode
from minikeras.layers.preprocessing.hash_strings import hash_buckets
from minikeras.layers.preprocessing.host_layer import HostLayer, host_array, out_tensor
from minikeras.layers.preprocessing.siphash import keyed_hash_buckets


class Hashing(HostLayer):
    """Hashes values into ``num_bins`` buckets as Keras 3's ``Hashing`` (TF's
    ``to_hash_bucket_fast``: FarmHash Fingerprint64 of the string, modulo the bins; integers and
    floats are hashed as their decimal strings, floats truncated to integers first).

        mk.layers.Hashing(num_bins=3)([["A"], ["B"], ["C"], ["D"], ["E"]])   # [[1] [0] [1] [1] [2]]

    Args:
      num_bins: the number of buckets (with ``mask_value``, bucket 0 is the mask's).
      mask_value: a value that goes to bucket 0 (the others to 1 .. num_bins - 1).
      salt: None, an integer, or two integers: hash with SipHash-2-4 keyed by them (an integer
        ``s`` is ``[s, s]``), as Keras's ``to_hash_bucket_strong``, instead of Fingerprint64.
      output_mode: 'int', 'one_hot', 'multi_hot' or 'count'.
      sparse: False only.
    """

    maps_values_one_to_one = True  # with output_mode='int': a RaggedTensor in, one out (HostLayer)

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs):
        dtype = kwargs.pop("dtype", None) or ("int64" if output_mode == "int" else "float32")
        if isinstance(dtype, dict):
            dtype = dtype.get("config", {}).get("name", "int64")
        super().__init__(dtype=dtype, **kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                             f"num_bins={num_bins}.")
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of ('int', 'one_hot', "
                             f"'multi_hot', 'count'). Received: output_mode={output_mode}")
        if salt is not None and not (isinstance(salt, int) or (
                isinstance(salt, (tuple, list)) and len(salt) == 2 and all(isinstance(k, int) for k in salt))):
            raise ValueError(f"The `salt` argument for `Hashing` can only be a tuple of size 2 integers, or a single "
                             f"integer. Received: salt={salt}.")
        if sparse:
            raise ValueError(f"Hashing '{self.name}': `sparse=True` needs sparse tensors, which minikeras does not "
                             "have")
        self.num_bins = num_bins
        self.mask_value = mask_value
        self.strong_hash = salt is not None
        self.salt = None if salt is None else [salt, salt] if isinstance(salt, int) else list(salt)
        self.output_mode = output_mode
        self.sparse = sparse

    def _bins(self, array):
        bins, mask = self.num_bins, None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask_value = self.mask_value.encode("utf-8") if isinstance(self.mask_value, str) else self.mask_value
            mask = array == mask_value
        if array.dtype.kind == "f":
            array = array.astype(np.int64)
        if array.dtype != object:
            keys = [b"%d" % v for v in array.reshape(-1).tolist()]
        else:
            keys = array.reshape(-1).tolist()
        if self.strong_hash:
            out = keyed_hash_buckets(keys, bins, self.salt).reshape(array.shape)
        else:
            out = hash_buckets(keys, bins).reshape(array.shape)
        if mask is not None:
            out = np.where(mask, 0, out + 1)
        return out

    def call(self, inputs):
        array = host_array(inputs)
        if self.output_mode == "one_hot" and array.ndim and array.shape[-1] == 1:
            array = array[..., 0]
        indices = self._bins(array)
        if self.output_mode == "int":
            return out_tensor(indices)
        return out_tensor(encode(indices, self.output_mode, self.num_bins, f"Hashing '{self.name}'"))

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        if len(input_shape) == 0:
            return (self.num_bins,)
        return tuple(input_shape[:-1]) + (self.num_bins,)

    def get_config(self):
        config = super().get_config()
        config.update({"num_bins": self.num_bins, "salt": self.salt, "mask_value": self.mask_value,
                       "output_mode": self.output_mode, "sparse": self.sparse})
        return config

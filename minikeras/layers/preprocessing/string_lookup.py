"""``StringLookup``: strings to vocabulary indices (or back with ``invert=True``), on the host."""
import numpy as np

from minikeras.layers.preprocessing.hash_strings import hash_buckets
from minikeras.layers.preprocessing.index_lookup import IndexLookup


class StringLookup(IndexLookup):
    """Maps strings to integer indices through a vocabulary (Keras 3's ``StringLookup``).

        lookup = mk.layers.StringLookup(vocabulary=["a", "b", "c"])
        lookup(mk.constant([["a", "c"], ["d", "b"]]))   # [[1 3] [0 2]]: 0 is the OOV index

    Args: max_tokens, num_oov_indices (1), mask_token (None), oov_token ('[UNK]'), vocabulary,
    idf_weights, invert, output_mode ('int', 'one_hot', 'multi_hot', 'count', 'tf_idf'),
    pad_to_max_tokens, sparse (False only), encoding ('utf-8').
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", name=None, vocabulary_size=None, oov_method="floormod", salt=None, **kwargs):
        self.encoding = encoding
        kwargs.pop("vocabulary_dtype", None)
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices, mask_token=mask_token,
                         oov_token=oov_token, vocabulary_dtype="string", vocabulary=vocabulary,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode,
                         pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, name=name,
                         vocabulary_size=vocabulary_size, oov_method=oov_method, salt=salt, **kwargs)

    def _key(self, token):
        if isinstance(token, bytes):
            return token
        if isinstance(token, str):
            return token.encode(self.encoding)
        raise TypeError(f"StringLookup '{self.name}' expects strings, received {token!r}")

    def _keys_of(self, array):
        if array.dtype != object:
            raise TypeError(f"StringLookup '{self.name}' expects string inputs, received an array of dtype "
                            f"{array.dtype}")
        return array.tolist()

    def _check_adapt_dtype(self, data):
        if data.dtype != object:
            raise ValueError(f"StringLookup '{self.name}'.adapt expects strings, received data of dtype "
                             f"{data.dtype}")

    def _public(self, key):
        return key.decode(self.encoding) if isinstance(key, bytes) else key

    def _oov_buckets(self, keys):
        return hash_buckets(keys, self.num_oov_indices)

    def _array_of(self, keys):
        out = np.empty(len(keys), dtype=object)
        out[:] = keys
        return out

    def get_config(self):
        config = super().get_config()
        del config["vocabulary_dtype"]
        config["encoding"] = self.encoding
        return config

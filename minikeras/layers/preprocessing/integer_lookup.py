"""``IntegerLookup``: integer tokens to vocabulary indices (or back), on the host."""
import numpy as np

from minikeras.layers.preprocessing.index_lookup import IndexLookup


class IntegerLookup(IndexLookup):
    """Maps integer tokens (ids, codes) to contiguous indices (Keras 3's ``IntegerLookup``).

        lookup = mk.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42])
        lookup(mk.constant([[12, 1138, 42], [42, 1000, 36]]))   # [[1 3 4] [4 0 2]]

    Args: max_tokens, num_oov_indices (1), mask_token (None), oov_token (-1), vocabulary,
    vocabulary_dtype ('int64' only), idf_weights, invert, output_mode, sparse (False only),
    pad_to_max_tokens.
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, oov_method="floormod", salt=None, name=None, vocabulary_size=None, **kwargs):
        if vocabulary_dtype != "int64":
            raise ValueError(f"Only `vocabulary_dtype='int64'` is supported at this time. Received: "
                             f"vocabulary_dtype={vocabulary_dtype}")
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices, mask_token=mask_token,
                         oov_token=oov_token, vocabulary_dtype=vocabulary_dtype, vocabulary=vocabulary,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode, sparse=sparse,
                         pad_to_max_tokens=pad_to_max_tokens, oov_method=oov_method, salt=salt, name=name,
                         vocabulary_size=vocabulary_size, **kwargs)

    def _key(self, token):
        if isinstance(token, (bytes, str)):
            try:
                return int(token)
            except ValueError:
                raise TypeError(f"IntegerLookup '{self.name}' expects integers, received {token!r}") from None
        return int(token)

    def _keys_of(self, array):
        array = np.asarray(array)
        if array.dtype.kind not in "iu" and not (array.dtype.kind == "O" and array.size and
                                                  isinstance(array.flat[0], (int, np.integer))):
            raise TypeError(f"IntegerLookup '{self.name}' expects integer inputs, received an array of dtype "
                            f"{array.dtype}")
        return array.astype(np.int64).tolist()

    def _check_adapt_dtype(self, data):
        if data.dtype.kind not in "iu":
            raise ValueError(f"IntegerLookup '{self.name}'.adapt expects integers, received data of dtype "
                             f"{data.dtype}")

    def _oov_buckets(self, keys):
        return np.mod(np.asarray(keys, np.int64), self.num_oov_indices)

    def _array_of(self, keys):
        return np.asarray(keys, dtype=np.int64)

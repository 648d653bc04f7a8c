"""What ``StringLookup`` and ``IntegerLookup`` share (Keras 3's ``IndexLookup``), on the host.

The vocabulary is laid out as Keras lays it out: the mask token (index 0, when there is one and
``output_mode='int'``), then ``num_oov_indices`` OOV indices, then the learned tokens, most
frequent first (ties: the greater token first, as Keras's ``lexsort`` gives). A token not in the
vocabulary goes to the one OOV index, or with several to a bucket: ``floormod`` for integers,
FarmHash Fingerprint64 of the string for strings (``tf.strings.to_hash_bucket_fast``). The
lookup itself is a Python dict; ``adapt`` counts tokens batch by batch with a ``Counter``.
"""
import collections
import os

import numpy as np

from minikeras.errors import FailedPreconditionError, InvalidArgumentError
from minikeras.layers.preprocessing import adapt_data
from minikeras.layers.preprocessing.encoding import MODES, encode
from minikeras.layers.preprocessing.host_layer import HostLayer, host_array, out_tensor


class IndexLookup(HostLayer):
    """Maps tokens to indices (or back, with ``invert=True``) through a vocabulary.

    Args (Keras 3's): max_tokens, num_oov_indices, mask_token, oov_token, vocabulary (a list,
    array, 1-D Tensor or the path of a text file with one token a line), idf_weights, invert,
    output_mode ('int', 'one_hot', 'multi_hot', 'count', 'tf_idf'), pad_to_max_tokens,
    sparse (False only).
    """

    maps_values_one_to_one = True  # with output_mode='int': a RaggedTensor in, one out (HostLayer)

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary_dtype, vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", sparse=False, pad_to_max_tokens=False,
                 oov_method="floormod", salt=None, name=None, vocabulary_size=None, **kwargs):
        cls = type(self).__name__
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"If pad_to_max_tokens is True, must set `max_tokens`. Received: max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode not in MODES:
            raise ValueError(f"Invalid value for argument output_mode passed to {cls}. Expected one of "
                             f"{list(MODES)}. Received: output_mode={output_mode!r}")
        if invert and output_mode != "int":
            raise ValueError("`output_mode` must be `'int'` when `invert` is true. "
                             f"Received: output_mode={output_mode}")
        if sparse:
            raise ValueError(f"{cls}: `sparse=True` needs sparse tensors, which minikeras does not have; use "
                             "sparse=False")
        if oov_method != "floormod" or salt is not None:
            raise ValueError(f"{cls}: only oov_method='floormod' without a salt is supported, received "
                             f"oov_method={oov_method!r}, salt={salt!r}")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError(f"`idf_weights` should only be set if `output_mode` is `'tf_idf'`. Received: "
                             f"idf_weights={idf_weights} and output_mode={output_mode}")
        frozen = vocabulary_size
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("dtype", None)
        super().__init__(name=name, **kwargs)
        self.invert = invert
        self.max_tokens = max_tokens
        self.num_oov_indices = num_oov_indices
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.output_mode = output_mode
        self.sparse = sparse
        self.pad_to_max_tokens = pad_to_max_tokens
        self.vocabulary_dtype = vocabulary_dtype
        self.oov_method = oov_method
        self.salt = salt
        self._frozen_vocab_size = frozen
        self.input_vocabulary = vocabulary if not isinstance(vocabulary, str) else None
        self.input_idf_weights = idf_weights
        self._has_input_vocabulary = has_input_vocabulary
        self._tokens = []             # the learned tokens, in index order (keys: bytes or ints)
        self._index = {}
        self.idf_weights = None
        if output_mode == "tf_idf" and has_input_vocabulary and idf_weights is None and vocabulary is not None:
            raise ValueError("When specifying the `vocabulary` argument, in TF-IDF output mode, the `idf_weights` "
                             "argument must also be provided.")
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        self.reset_state()

    # -- keys: bytes for strings, ints for integers (subclasses) ---------------------------
    def _key(self, token):
        raise NotImplementedError

    def _keys_of(self, array):
        raise NotImplementedError

    def _public(self, key):
        """A vocabulary entry as ``get_vocabulary`` returns it."""
        return key

    def _oov_buckets(self, keys):
        raise NotImplementedError

    # -- vocabulary --------------------------------------------------------------------------
    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    @property
    def has_input_vocabulary(self):
        """Whether the vocabulary was given (``vocabulary=``) rather than to be learned by ``adapt``."""
        return self._has_input_vocabulary

    def vocabulary_size(self):
        """The size of the vocabulary, mask and OOV indices included."""
        return len(self._tokens) + self._token_start_index()

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary: a token's position is its index (mask and OOV tokens first, unless
        ``include_special_tokens=False``)."""
        special = ([self.mask_token] if self._oov_start_index() else []) + [self.oov_token] * self.num_oov_indices
        tokens = [self._public(k) for k in self._tokens]
        return special + tokens if include_special_tokens else tokens

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (a list, array, 1-D Tensor or a text file's path) and, for
        'tf_idf', the IDF weights of its tokens."""
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError(f"`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                             f"output_mode={self.output_mode} and idf_weights={idf_weights}")
        if isinstance(vocabulary, str):
            vocabulary = self._read_vocabulary_file(vocabulary)
        keys = [self._key(t) for t in np.asarray(host_array(vocabulary), dtype=object).reshape(-1).tolist()]
        if not keys:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        token_start = self._token_start_index()
        mask_key = None if self.mask_token is None else self._key(self.mask_token)
        oov_key = None if self.oov_token is None else self._key(self.oov_token)
        special = [mask_key] * self._oov_start_index() + [oov_key] * self.num_oov_indices
        found_special = keys[:token_start] == special
        tokens = keys[token_start:] if found_special else keys
        repeated = [self._public(k) for k, n in collections.Counter(tokens).items() if n > 1]
        if repeated:
            raise ValueError(f"The passed vocabulary has at least one repeated term. Please uniquify your dataset. "
                             f"The repeated terms are: {repeated}")
        if mask_key is not None and mask_key in tokens:
            raise ValueError(f"Found reserved mask token at unexpected location in `vocabulary`. Note that passed "
                             f"`vocabulary` does not need to include the OOV and mask tokens. Either remove all mask "
                             f"and OOV tokens, or include them only at the start of the vocabulary in precisely this "
                             f"order: {[self._public(k) for k in special]}. Received: mask_token={self.mask_token}")
        if oov_key is not None and self.invert and oov_key in tokens:
            raise ValueError(f"Found reserved OOV token at unexpected location in `vocabulary`. Received: "
                             f"oov_token={self.oov_token}")
        if self.max_tokens is not None and token_start + len(tokens) > self.max_tokens:
            raise ValueError(f"Attempted to set a vocabulary larger than the maximum vocab size. Received vocabulary "
                             f"size is {token_start + len(tokens)}; `max_tokens` is {self.max_tokens}.")
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            weights = np.asarray(host_array(idf_weights), np.float32).reshape(-1)
            if len(weights) != len(keys):
                raise ValueError(f"`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                                 f"{len(weights)}; len(vocabulary) is {len(keys)}")
            front = (0, 0.0) if found_special else (token_start, float(np.average(weights)))
            back = self.max_tokens - front[0] - len(weights) if self.pad_to_max_tokens and self.max_tokens else 0
            self.idf_weights = np.pad(weights, (front[0], back), constant_values=(front[1], 0.0)).astype(np.float32)
        self._record_vocabulary_size()

    def _read_vocabulary_file(self, path):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            raise ValueError(f"Vocabulary file {path} does not exist.") from None
        while lines and lines[-1] == "":
            lines.pop()
        return lines

    def _set_tokens(self, tokens):
        start = self._token_start_index()
        self._tokens = list(tokens)
        self._index = {k: i + start for i, k in enumerate(self._tokens)}

    def _record_vocabulary_size(self):
        if self.output_mode == "int" or self.pad_to_max_tokens:
            self._frozen_vocab_size = self.vocabulary_size()
            return
        size = self.vocabulary_size()
        if self._frozen_vocab_size is not None and self.built and size != self._frozen_vocab_size:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, the "
                               f"vocabulary size cannot be changed after the layer is called. Old vocab size is "
                               f"{self._frozen_vocab_size}, new vocab size is {size}")
        self._frozen_vocab_size = size

    # -- adapt -------------------------------------------------------------------------------
    def reset_state(self):
        self._counts = collections.Counter()
        self._document_counts = collections.Counter()
        self._num_documents = 0

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary from ``data`` (an array, list, Tensor, Dataset or iterable of
        batches), read once, batch by batch: the tokens counted, the most frequent kept."""
        self.reset_state()
        for batch in adapt_data.batches(data, batch_size, steps, column=True):
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        if self._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static vocabulary via `vocabulary` "
                             "argument or `set_vocabulary()` method.")
        array = data if isinstance(data, list) and data and isinstance(data[0], list) else host_array(data)
        rows = self._rows(array)
        flat = [k for row in rows for k in row]
        self._counts.update(flat)
        if self.output_mode == "tf_idf":
            for row in rows:
                self._document_counts.update(set(row))
            self._num_documents += len(rows)

    def _rows(self, data):
        """The documents of an adapt batch as lists of keys (a scalar or vector is one document)."""
        if isinstance(data, list):  # ragged rows (TextVectorization's tokens)
            return [self._keys_of(np.asarray(row, dtype=object if isinstance(row[0], bytes) else None)) if row else []
                    for row in data]  # a document with no tokens ("", "!!!") counts as a document of none
        self._check_adapt_dtype(data)
        if data.ndim <= 1:
            return [self._keys_of(data.reshape(-1))]
        return [self._keys_of(row.reshape(-1)) for row in data.reshape(data.shape[0], -1)]

    def _check_adapt_dtype(self, data):
        raise NotImplementedError

    def finalize_state(self):
        if self._has_input_vocabulary or not self._counts:
            self._record_vocabulary_size()
            return
        counts = dict(self._counts)
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                counts.pop(self._key(special), None)
        # Keras: np.lexsort((tokens, counts))[::-1]: most frequent first, ties the greater token first
        ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        if self.max_tokens:
            ordered = ordered[:self.max_tokens - self._token_start_index()]
        tokens = [k for k, _ in ordered]
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            document_counts = np.array([self._document_counts[k] for k in tokens], np.float64)
            idf = np.log(1 + self._num_documents / (1 + document_counts)).astype(np.float32)
            idf = np.pad(idf, (self._token_start_index(), 0), constant_values=float(np.mean(idf)) if len(idf) else 0)
            if self.pad_to_max_tokens and self.max_tokens is not None:
                idf = np.pad(idf, (0, self.max_tokens - len(idf)))
            self.idf_weights = idf.astype(np.float32)
        self.reset_state()
        self._record_vocabulary_size()

    # -- calling -----------------------------------------------------------------------------
    @property
    def output_dtype(self):
        if self.invert:
            return "string" if self.vocabulary_dtype == "string" else "int32"
        return "int32" if self.output_mode == "int" else "float32"

    def build(self, input_shape):
        self.built = True

    def call(self, inputs):
        array = host_array(inputs)
        if self.output_mode != "int" and not self.pad_to_max_tokens and self._frozen_vocab_size is None:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, you must "
                               "set the layer's vocabulary before calling it. Either pass a `vocabulary` argument to "
                               "the layer, or call `adapt` with some sample data.")
        if self.invert:
            return out_tensor(self._invert(array))
        indices = self.lookup(array)
        if self.output_mode == "int":
            return out_tensor(indices)
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        out = encode(indices, "count" if self.output_mode == "tf_idf" else self.output_mode, depth,
                     f"{type(self).__name__} '{self.name}'")
        if self.output_mode == "tf_idf":
            if self.idf_weights is None:
                raise ValueError("When `output_mode` is `'tf_idf'`, `idf_weights` must be provided.")
            out = out * self.idf_weights
        return out_tensor(out.astype(np.float32))

    def _check_initialized(self):
        """TF's "Table not initialized": a lookup with no vocabulary (never given one, or adapted on
        data with no tokens) would map every token to OOV."""
        if not self._tokens:
            raise FailedPreconditionError(
                None, "LookupTableFindV2",
                f"Table not initialized: {type(self).__name__} '{self.name}' has no vocabulary yet. Pass "
                "`vocabulary=` to the layer, call `set_vocabulary(...)`, or call `adapt(data)` on data with tokens "
                "first")

    def lookup(self, array):
        """The indices of the tokens in ``array`` (NumPy), as int64; the mask token maps to 0 in
        'int' mode and to nothing (an index past the vocabulary) otherwise."""
        self._check_initialized()
        keys = self._keys_of(array.reshape(-1))
        missing = -1
        index = self._index
        out = np.fromiter((index.get(k, missing) for k in keys), dtype=np.int64, count=len(keys))
        if self.mask_token is not None:
            mask_key = self._key(self.mask_token)
            is_mask = np.fromiter((k == mask_key for k in keys), dtype=bool, count=len(keys))
            out[is_mask] = 0 if self.output_mode == "int" else np.iinfo(np.int64).max
        else:
            is_mask = None
        oov = out == missing
        if oov.any():
            if self.num_oov_indices == 0:
                found = [self._public(k) for k, o in zip(keys, oov) if o]
                raise InvalidArgumentError(None, "LookupTableFind", f"When `num_oov_indices=0` all inputs should be "
                                           f"in vocabulary, found OOV values {found}, consider setting "
                                           "`num_oov_indices=1`.")
            if self.num_oov_indices == 1:
                out[oov] = self._oov_start_index()
            else:
                out[oov] = self._oov_start_index() + self._oov_buckets([k for k, o in zip(keys, oov) if o])
        return out.reshape(array.shape)

    def _invert(self, array):
        self._check_initialized()
        indices = np.asarray(array).astype(np.int64)
        vocabulary = self.get_vocabulary()
        keys = [self._key(v) if v is not None else None for v in vocabulary]
        oov = self._key(self.oov_token) if self.oov_token is not None else None
        flat = indices.reshape(-1)
        values = [keys[i] if 0 <= i < len(keys) and i >= self._oov_start_index() + self.num_oov_indices
                  else (keys[0] if i == 0 and self._oov_start_index() else oov) for i in flat]
        return self._array_of(values).reshape(indices.shape)

    def _array_of(self, keys):
        raise NotImplementedError

    # -- .keras files: the vocabulary is an asset (Keras 3's vocabulary.txt) ------------------------
    def save_assets(self, dir_path):
        """Writes ``vocabulary.txt`` (one token a line, special tokens first) unless the vocabulary
        was given to the constructor (then it is in the config)."""
        if self.input_vocabulary is not None:
            return
        with open(os.path.join(dir_path, "vocabulary.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(str(w) for w in self.get_vocabulary(include_special_tokens=True)))

    def load_assets(self, dir_path):
        if self.input_vocabulary is not None:
            return
        path = os.path.join(dir_path, "vocabulary.txt")
        if not os.path.exists(path):
            raise ValueError(f"{type(self).__name__} '{self.name}': the model file has no vocabulary.txt for this "
                             "layer (an adapted lookup layer's vocabulary is stored as an asset)")
        lines = self._read_vocabulary_file(path)
        if not lines:
            return  # saved before adapt: nothing learned yet
        idf_weights = None
        if self.output_mode == "tf_idf":
            if self.idf_weights is None:
                raise ValueError(f"{type(self).__name__} '{self.name}': output_mode='tf_idf', but the model file has "
                                 "no idf_weights for this layer (vars/idf_weights in its weights)")
            idf_weights = self.idf_weights[:len(lines)]  # read by load_own_variables; padded to max_tokens
        self.set_vocabulary(lines, idf_weights=idf_weights)

    # The IDF weights of 'tf_idf' are no Variable: a weights file keeps them as Keras 3 does,
    # under the layer's vars/idf_weights (written and read before the vocabulary asset).
    def save_own_variables(self, store):
        """Keras 3's weights-file state of the layer: ``idf_weights`` in 'tf_idf' mode, nothing else."""
        if self.output_mode == "tf_idf" and self.idf_weights is not None:
            store["idf_weights"] = np.asarray(self.idf_weights, np.float32)

    def load_own_variables(self, store):
        """Takes ``idf_weights`` from a weights file (the vocabulary that goes with them comes next)."""
        if self.output_mode == "tf_idf" and "idf_weights" in store:
            self.idf_weights = np.asarray(store["idf_weights"], np.float32).reshape(-1)

    # -- configuration -----------------------------------------------------------------------
    def get_config(self):
        config = super().get_config()
        config.update({
            "invert": self.invert, "max_tokens": self.max_tokens, "num_oov_indices": self.num_oov_indices,
            "oov_token": self.oov_token, "mask_token": self.mask_token, "output_mode": self.output_mode,
            "sparse": self.sparse, "pad_to_max_tokens": self.pad_to_max_tokens,
            "vocabulary_dtype": self.vocabulary_dtype,
            "idf_weights": _listify(self.input_idf_weights), "vocabulary": _listify(self.input_vocabulary),
            "vocabulary_size": self._frozen_vocab_size, "oov_method": self.oov_method, "salt": self.salt,
        })
        return config

    def get_build_config(self):
        return {}

    def build_from_config(self, config):
        self.build(None)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        input_shape = tuple(input_shape)
        if self.output_mode == "one_hot":
            if input_shape and input_shape[-1] == 1:
                return input_shape[:-1] + (depth,)
            return input_shape + (depth,)
        return input_shape[:-1] + (depth,) if len(input_shape) > 1 else (depth,)


def _listify(value):
    if value is None:
        return None
    array = host_array(value)
    if array.dtype == object:
        return [v.decode("utf-8") if isinstance(v, bytes) else v for v in array.reshape(-1).tolist()]
    return array.tolist()

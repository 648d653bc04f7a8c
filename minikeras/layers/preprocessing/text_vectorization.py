"""``TextVectorization``: raw strings to token indices or bag-of-words vectors, on the host.

Each string is standardized (lower-cased and stripped of ASCII punctuation by default), split
into tokens (on whitespace, or into characters), optionally extended with n-grams, and looked up
in a ``StringLookup`` vocabulary whose index 0 is the padding mask ('') and 1 the OOV token
('[UNK]'), as in Keras 3. The default standardization works on bytes with ``bytes.lower`` and
``bytes.translate`` (the same result as TF's ``lower`` and punctuation ``regex_replace``);
a callable ``standardize`` or ``split`` receives and returns ``mk`` string Tensors.
"""
import numpy as np

from minikeras.errors import FailedPreconditionError
from minikeras.layers.preprocessing import adapt_data
from minikeras.layers.preprocessing.encoding import MODES
from minikeras.layers.preprocessing.host_layer import HostLayer, host_array, out_tensor
from minikeras.layers.preprocessing.string_lookup import StringLookup
from minikeras.ragged import RaggedTensor
from minikeras.string_tensor import StringTensor

PUNCTUATION_PATTERN = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'  # Keras's; the bytes below are its class
_PUNCTUATION_BYTES = b"!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'"
_STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
_SPLIT = ("whitespace", "character")


def _ngrams(tokens, widths):
    out = []
    for n in widths:
        out.extend(b" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    return out


class TextVectorization(HostLayer):
    """Turns strings into sequences of token indices or token-count vectors (Keras 3's
    ``TextVectorization``).

        vectorize = mk.layers.TextVectorization(max_tokens=10_000, output_sequence_length=250)
        vectorize.adapt(train_texts)           # the vocabulary: most frequent tokens first
        vectorize(["The movie was great!"])    # int Tensor (1, 250), 0-padded

    Args:
      max_tokens: the vocabulary's size limit, padding and OOV tokens included.
      standardize: 'lower_and_strip_punctuation', 'lower', 'strip_punctuation', None, or a
        callable from a string Tensor to a string Tensor (e.g. with ``mk.strings``).
      split: 'whitespace', 'character', None, or a callable from a string Tensor of shape
        (batch,) to tokens (an ``mk.RaggedTensor``, a 2-D string Tensor or a list of lists).
      ngrams: None, an int n (1- to n-grams) or a tuple of widths.
      output_mode: 'int', 'multi_hot', 'count' or 'tf_idf' (and 'one_hot').
      output_sequence_length: 'int' mode: pad or cut each row to this length.
      pad_to_max_tokens: the vector modes' width is ``max_tokens``.
      vocabulary, idf_weights: a vocabulary (list, array or text file path) instead of adapt.
      sparse, ragged: False only (dense outputs).
      encoding: the strings' encoding ('utf-8').
    """

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None, vocabulary_size=None,
                 **kwargs):
        cls = "TextVectorization"
        if not (standardize is None or callable(standardize) or standardize in _STANDARDIZE):
            raise ValueError(f"Invalid value for argument standardize passed to {cls}. Expected one of "
                             f"{list(_STANDARDIZE)}, None or a callable. Received: standardize={standardize!r}")
        if not (split is None or callable(split) or split in _SPLIT):
            raise ValueError(f"Invalid value for argument split passed to {cls}. Expected one of {list(_SPLIT)}, "
                             f"None or a callable. Received: split={split!r}")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode not in MODES:
            raise ValueError(f"Invalid value for argument output_mode passed to {cls}. Expected one of "
                             f"{list(MODES)}. Received: output_mode={output_mode!r}")
        if not (ngrams is None or isinstance(ngrams, int) or isinstance(ngrams, tuple)
                and all(isinstance(item, int) for item in ngrams)):
            raise ValueError(f"`ngrams` must be None, an integer, or a tuple of integers. Received: ngrams={ngrams}")
        if output_mode == "int" and not (output_sequence_length is None or isinstance(output_sequence_length, int)):
            raise ValueError(f"`output_sequence_length` must be either None or an integer when `output_mode` is "
                             f"'int'. Received: output_sequence_length={output_sequence_length}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError(f"`output_sequence_length` must not be set if `output_mode` is not 'int'. Received "
                             f"output_sequence_length={output_sequence_length}.")
        if ragged:
            raise ValueError(f"{cls}: `ragged=True` is not supported (outputs are dense, padded with 0)")
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("dtype", None)
        super().__init__(name=name, **kwargs)
        self._standardize = standardize
        self._split = split
        self._ngrams_arg = ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._ragged = ragged
        self._output_mode = output_mode
        self._output_sequence_length = output_sequence_length
        self._encoding = encoding
        self._lookup_layer = StringLookup(
            max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
            pad_to_max_tokens=pad_to_max_tokens, mask_token="", output_mode=output_mode, sparse=sparse,
            has_input_vocabulary=has_input_vocabulary, encoding=encoding, vocabulary_size=vocabulary_size)

    # -- the text pipeline ----------------------------------------------------------------------
    def _standardized(self, array):
        """Object array of bytes -> object array of bytes, standardized."""
        mode = self._standardize
        if mode is None:
            return array
        if callable(mode):
            return host_array(mode(StringTensor.of_bytes(array)))
        lower = mode != "strip_punctuation"
        strip = mode != "lower"
        out = np.empty(array.shape, dtype=object)
        flat, items = out.reshape(-1), array.reshape(-1)
        for i in range(items.size):
            text = items[i].lower() if lower else items[i]
            flat[i] = text.translate(None, _PUNCTUATION_BYTES) if strip else text
        return out

    def _tokens(self, array):
        """The standardized strings (rank 1) as lists of tokens, one per string."""
        split = self._split
        if callable(split):
            result = split(StringTensor.of_bytes(array))
            if isinstance(result, RaggedTensor):
                return [list(row) for row in result.numpy()]
            if isinstance(result, list):
                return [list(host_array(row).reshape(-1)) for row in result]
            return [list(row) for row in host_array(result)]
        if split == "whitespace":
            return [item.split() for item in array.tolist()]
        return [[c.encode("utf-8") for c in item.decode("utf-8", "replace")] for item in array.tolist()]

    def _preprocess(self, inputs):
        """Strings in -> a list of token lists (split), or an object array (no split)."""
        array = host_array(inputs)
        if array.dtype != object:
            raise ValueError(f"TextVectorization '{self.name}' expects string inputs, received an array of dtype "
                             f"{array.dtype} and shape {array.shape}")
        array = self._standardized(array)
        if self._split is None:
            if self._ngrams:
                raise ValueError(f"TextVectorization '{self.name}': `ngrams` needs a `split`")
            return array
        scalar = array.ndim == 0
        if array.ndim > 1:
            if array.shape[-1] != 1:
                raise ValueError(f"When using `TextVectorization` to tokenize strings, the input rank must be 1 or "
                                 f"the last shape dimension must be 1. Received: inputs.shape={array.shape} with "
                                 f"rank={array.ndim}")
            array = array[..., 0]
        rows = self._tokens(array.reshape(-1))
        if self._ngrams:
            rows = [_ngrams(row, self._ngrams) for row in rows]
        return rows[0] if scalar else rows

    # -- adapt ---------------------------------------------------------------------------------
    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary (and IDF weights) from ``data``: an array, list or Tensor of
        strings, a Dataset of string batches or an iterable of them, read once, batch by batch."""
        self.reset_state()
        for batch in adapt_data.batches(data, batch_size, steps, column=True):
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        array = host_array(data)
        tokens = self._preprocess(array)
        if isinstance(tokens, list) and array.ndim == 0:  # one document (a TextLineDataset's line), maybe empty
            tokens = [tokens]
        self._lookup_layer.update_state(tokens if isinstance(tokens, list) else tokens)

    def finalize_state(self):
        self._lookup_layer.finalize_state()

    def reset_state(self):
        self._lookup_layer.reset_state()

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary: '' (padding, index 0), '[UNK]' (index 1), then the tokens."""
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    @property
    def has_input_vocabulary(self):
        """Whether the vocabulary was given (``vocabulary=``) rather than to be learned by ``adapt``."""
        return self._lookup_layer.has_input_vocabulary

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights=idf_weights)

    # -- calling ---------------------------------------------------------------------------------
    @property
    def output_dtype(self):
        return "int32" if self._output_mode == "int" else "float32"

    def build(self, input_shape=None):
        self.built = True

    def call(self, inputs):
        try:
            return self._vectorize(inputs)
        except FailedPreconditionError as error:  # its lookup's "Table not initialized", named for this layer
            raise FailedPreconditionError(
                None, error.op, f"Table not initialized: TextVectorization '{self.name}' has no vocabulary yet. Pass "
                "`vocabulary=` to the layer, or call `adapt(data)` on texts with tokens first") from None

    def _vectorize(self, inputs):
        tokens = self._preprocess(inputs)
        lookup = self._lookup_layer
        if not isinstance(tokens, list):  # no split: each string is one token
            return lookup(StringTensor.of_bytes(tokens) if tokens.ndim > 1 or self._output_mode == "int"
                          else StringTensor.of_bytes(tokens[:, None]))
        if tokens and not isinstance(tokens[0], list):  # one string
            tokens_array = np.empty(len(tokens), dtype=object)
            tokens_array[:] = tokens
            if self._output_mode == "int":
                return self._int_rows([lookup.lookup(tokens_array)], scalar=True)
            return lookup(StringTensor.of_bytes(tokens_array))
        if self._output_mode == "int":
            return self._int_rows([lookup.lookup(_object_row(row)) for row in tokens])
        return out_tensor(np.stack([lookup(StringTensor.of_bytes(_object_row(row))).numpy() for row in tokens])
                          if tokens else np.zeros((0, lookup.compute_output_shape((1,))[-1]), np.float32))

    def _int_rows(self, rows, scalar=False):
        width = self._output_sequence_length
        if width is None:
            width = max((len(r) for r in rows), default=0)
        out = np.zeros((len(rows), width), np.int64)
        for i, row in enumerate(rows):
            row = row[:width]
            out[i, :len(row)] = row
        return out_tensor(out[0] if scalar else out)

    def save_assets(self, dir_path):
        self._lookup_layer.save_assets(dir_path)

    def load_assets(self, dir_path):
        self._lookup_layer.load_assets(dir_path)

    def save_own_variables(self, store):
        """The lookup layer's ``idf_weights`` ('tf_idf'), also kept in this layer's own group, as Keras 3."""
        self._lookup_layer.save_own_variables(store)

    def load_own_variables(self, store):
        self._lookup_layer.load_own_variables(store)

    # -- configuration ---------------------------------------------------------------------------
    def get_config(self):
        config = super().get_config()
        config.update({
            "max_tokens": self._lookup_layer.max_tokens, "standardize": self._standardize, "split": self._split,
            "ngrams": self._ngrams_arg, "output_mode": self._output_mode,
            "output_sequence_length": self._output_sequence_length,
            "pad_to_max_tokens": self._lookup_layer.pad_to_max_tokens, "sparse": self._lookup_layer.sparse,
            "ragged": self._ragged, "vocabulary": self._lookup_layer.get_config()["vocabulary"],
            "idf_weights": self._lookup_layer.get_config()["idf_weights"], "encoding": self._encoding,
            "vocabulary_size": self.vocabulary_size(),
        })
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("ngrams"), list):
            config["ngrams"] = tuple(config["ngrams"])
        return cls(**config)

    def get_build_config(self):
        return {}

    def build_from_config(self, config):
        self.build(None)

    def compute_output_shape(self, input_shape):
        if self._output_mode == "int":
            return (input_shape[0] if input_shape else None, self._output_sequence_length)
        # the lookup's depth: the vocabulary_size a config gave (a loaded model's graph is built before its
        # vocabulary asset is read, as in Keras), else the vocabulary's
        depth = self._lookup_layer.compute_output_shape((None, 1))[-1] or self.vocabulary_size()
        return (input_shape[0] if input_shape else None, depth)


def _object_row(row):
    out = np.empty(len(row), dtype=object)
    out[:] = row
    return out


"""``keras.utils.FeatureSpace``: one object that preprocesses and encodes a table's columns.

Each feature (a column, by name) gets a preprocessing layer (``Normalization``, ``Rescaling``,
``Discretization``, ``IntegerLookup``, ``StringLookup``, ``Hashing`` or one of the user's), crosses
of features get a ``HashedCrossing``, categorical outputs are one-hot (multi-hot) encoded with
``CategoryEncoding``, and the results are concatenated into one vector (``output_mode='concat'``)
or returned by name (``'dict'``), as Keras 3.15's FeatureSpace does.

    fs = mk.utils.FeatureSpace({"age": "float_normalized", "thal": "string_categorical"},
                               crosses=[("age", "thal")], output_mode="concat")
    fs.adapt(mk.data.Dataset.from_tensor_slices(table))   # a dict of columns
    vectors = fs(table)                                     # (rows, dims)

Strings and lookups run on the host (``HostLayer``), so a FeatureSpace is called eagerly: on a
dict of Python lists, NumPy arrays or Tensors, batched (rank 1 or ``(batch, 1)``) or one row
(scalars). ``Dataset.map(fs)``, or a map function that calls it, applies it row by row on the
host (``minikeras.data.host_calls``).
"""
import numpy as np

from minikeras.backend import is_tracer
from minikeras.data.dataset import Dataset
from minikeras.data.host_calls import HostOnlyCall
from minikeras.layers.base import Layer
from minikeras.layers.core.input_layer import Input
from minikeras.layers.preprocessing.category_encoding import CategoryEncoding
from minikeras.layers.preprocessing.discretization import Discretization
from minikeras.layers.preprocessing.hashed_crossing import HashedCrossing
from minikeras.layers.preprocessing.hashing import Hashing
from minikeras.layers.preprocessing.host_layer import host_array, out_tensor
from minikeras.layers.preprocessing.integer_lookup import IntegerLookup
from minikeras.layers.preprocessing.normalization import Normalization
from minikeras.layers.preprocessing.rescaling import Rescaling
from minikeras.layers.preprocessing.string_lookup import StringLookup
from minikeras.layers.preprocessing.text_vectorization import TextVectorization
from minikeras.module import unique_name
from minikeras.ops.array import concat
from minikeras.saving.model_file import save_model
from minikeras.saving.registry import deserialize_keras_object, register_builtin, serialize_keras_object
from minikeras.string_tensor import StringTensor
from minikeras.symbolic import KerasTensor
from minikeras.tensor import Tensor

# Keras 3 files name these classes by their module, keras.src.layers.preprocessing.feature_space
# (read back here as minikeras.layers); minikeras writes the same module name.
_KERAS_MODULE = "minikeras.src.layers.preprocessing.feature_space"


def _register(cls):
    return register_builtin(_KERAS_MODULE)(register_builtin("minikeras.layers")(cls))


def _is_spec(value):
    return isinstance(value, dict) and "class_name" in value and "config" in value


@_register
class Cross:
    """A cross of features: their combined values hashed into ``crossing_dim`` bins."""

    def __init__(self, feature_names, crossing_dim, output_mode="one_hot"):
        if output_mode not in {"int", "one_hot"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot'}. "
                             f"Received: output_mode={output_mode}")
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self):
        return "_X_".join(self.feature_names)

    def get_config(self):
        return {"feature_names": self.feature_names, "crossing_dim": self.crossing_dim,
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


@_register
class Feature:
    """One feature: the dtype of its input, its preprocessing layer and how its output is encoded
    ('int': as the layer gives it, 'one_hot': multi-hot over the layer's cardinality, 'float')."""

    def __init__(self, dtype, preprocessor, output_mode):
        if output_mode not in {"int", "one_hot", "float"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot', "
                             f"'float'}}. Received: output_mode={output_mode}")
        self.dtype = dtype
        if isinstance(preprocessor, dict):
            preprocessor = deserialize_keras_object(preprocessor)
        self.preprocessor = preprocessor
        self.output_mode = output_mode

    def get_config(self):
        return {"dtype": self.dtype, "preprocessor": serialize_keras_object(self.preprocessor),
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


@_register
class TFDIdentity(Layer):
    """The preprocessor of a plain ``float`` feature: its input as it is (Keras 3's name)."""

    def call(self, x):
        return x

    def compute_output_shape(self, input_shape):
        return input_shape


@_register
class TFDConcat(Layer):
    """Concatenates the encoded features along ``axis`` (Keras 3's name)."""

    def __init__(self, axis, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, xs):
        return concat(list(xs), axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _cardinality(preprocessor):
    """The number of values a categorical preprocessor's integer output can take, or None."""
    if isinstance(preprocessor, (IntegerLookup, StringLookup)):
        return preprocessor.vocabulary_size()
    if isinstance(preprocessor, CategoryEncoding):
        return preprocessor.num_tokens
    if isinstance(preprocessor, (Discretization, HashedCrossing, Hashing)):
        return preprocessor.num_bins
    return None


def _dtype_name(x):
    if isinstance(x, StringTensor):
        return "string"
    dtype = getattr(x, "dtype", None)
    if dtype == "string" or dtype == object:
        return "string"
    return str(np.dtype(dtype)) if dtype is not None else "float32"


def _as_column(value, name):
    """A raw input as a host array of shape (batch, 1) (scalars: (1, 1)), and whether it was one row."""
    if isinstance(value, dict):
        raise ValueError(f"FeatureSpace: feature '{name}' must be a list, an array or a Tensor; received a dict")
    array = host_array(value)
    if array.ndim == 0:
        return array.reshape(1, 1), True
    if array.ndim == 1:
        return array[:, None], False
    return array, False


@register_builtin("minikeras.utils")  # exported as keras.utils.FeatureSpace, the module Keras's files name
class FeatureSpace(Layer):
    """One-stop preprocessing and encoding of structured data (Keras 3's ``keras.utils.FeatureSpace``).

    Args:
      features: dict of feature name to its type: a name ('float', 'float_normalized',
        'float_rescaled', 'float_discretized', 'integer_categorical', 'string_categorical',
        'integer_hashed', 'string_hashed') or a ``FeatureSpace.<type>(...)`` / ``FeatureSpace.feature``.
      output_mode: 'concat' (one vector of all encoded features, in sorted name order, crosses
        last) or 'dict' (encoded features by name).
      crosses: features to cross, as tuples of names or ``FeatureSpace.cross(...)``.
      crossing_dim: bins of a cross given as a tuple of names (default 32).
      hashing_dim: bins of the 'integer_hashed'/'string_hashed' features named by string (32).
      num_discretization_bins: bins of 'float_discretized' features named by string (32).

    Call ``adapt(dataset)`` (a ``mk.data.Dataset`` of dicts, batched or not, or a dict of
    columns) before using it when a preprocessor learns from data; then call it on a dict of
    columns, or build a functional model on ``get_inputs()`` and ``get_encoded_features()``.
    ``save('fs.keras')`` writes Keras 3's file; ``mk.saving.load_model`` reads it back.
    """

    runs_on_host = True  # Dataset.map applies it eagerly, row by row (lookups and strings are host work)

    @classmethod
    def cross(cls, feature_names, crossing_dim, output_mode="one_hot"):
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype, preprocessor, output_mode):
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name=None):
        name = name or unique_name("float")
        return Feature("float32", TFDIdentity(dtype="float32", name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_rescaled(cls, scale=1.0, offset=0.0, name=None):
        name = name or unique_name("float_rescaled")
        return Feature("float32", Rescaling(scale=scale, offset=offset, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_normalized(cls, name=None):
        name = name or unique_name("float_normalized")
        return Feature("float32", Normalization(axis=-1, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_discretized(cls, num_bins, bin_boundaries=None, output_mode="one_hot", name=None):
        name = name or unique_name("float_discretized")
        layer = Discretization(num_bins=num_bins, bin_boundaries=bin_boundaries, name=f"{name}_preprocessor")
        return Feature("float32", layer, output_mode)

    @classmethod
    def integer_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        name = name or unique_name("integer_categorical")
        layer = IntegerLookup(name=f"{name}_preprocessor", max_tokens=max_tokens, num_oov_indices=num_oov_indices)
        return Feature("int32", layer, output_mode)

    @classmethod
    def string_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        name = name or unique_name("string_categorical")
        layer = StringLookup(name=f"{name}_preprocessor", max_tokens=max_tokens, num_oov_indices=num_oov_indices)
        return Feature("string", layer, output_mode)

    @classmethod
    def string_hashed(cls, num_bins, output_mode="one_hot", name=None):
        name = name or unique_name("string_hashed")
        return Feature("string", Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    @classmethod
    def integer_hashed(cls, num_bins, output_mode="one_hot", name=None):
        name = name or unique_name("integer_hashed")
        return Feature("int32", Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    def __init__(self, features, output_mode="concat", crosses=None, crossing_dim=32, hashing_dim=32,
                 num_discretization_bins=32, name=None):
        super().__init__(name=name)
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        self.crossing_dim = crossing_dim
        self.hashing_dim = hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {key: self._standardize_feature(key, value) for key, value in features.items()}
        self.crosses = [self._standardize_cross(cross, set(features)) for cross in crosses or []]
        self.crosses_by_name = {cross.name: cross for cross in self.crosses}
        if output_mode not in {"dict", "concat"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'dict', 'concat'}. "
                             f"Received: output_mode={output_mode}")
        self.output_mode = output_mode
        self.inputs = {key: Input(shape=(1,), dtype=feature.dtype, name=key) for key, feature in self.features.items()}
        self.preprocessors = {key: feature.preprocessor for key, feature in self.features.items()}
        self.encoded_features = None
        self.crossers = {cross.name: HashedCrossing(cross.crossing_dim, name=cross.name) for cross in self.crosses}
        self.one_hot_encoders = {}
        self._is_adapted = False
        self.concat = None
        self._preprocessed_features_names = None
        self._crossed_features_names = None
        self._sublayers_built = False

    def _standardize_feature(self, name, feature):
        if isinstance(feature, Feature):
            return feature
        if _is_spec(feature):
            return deserialize_keras_object(feature)
        makers = {"float": lambda: self.float(name=name),
                  "float_normalized": lambda: self.float_normalized(name=name),
                  "float_rescaled": lambda: self.float_rescaled(name=name),
                  "float_discretized": lambda: self.float_discretized(self.num_discretization_bins, name=name),
                  "integer_categorical": lambda: self.integer_categorical(name=name),
                  "string_categorical": lambda: self.string_categorical(name=name),
                  "integer_hashed": lambda: self.integer_hashed(self.hashing_dim, name=name),
                  "string_hashed": lambda: self.string_hashed(self.hashing_dim, name=name)}
        if not isinstance(feature, str) or feature not in makers:
            raise ValueError(f"Invalid feature type: {feature!r} for feature '{name}'. Expected one of "
                             f"{sorted(makers)} or a FeatureSpace.feature(...)")
        return makers[feature]()

    def _standardize_cross(self, cross, feature_names):
        if _is_spec(cross):
            cross = deserialize_keras_object(cross)
        if isinstance(cross, Cross):
            return cross
        if not self.crossing_dim:
            raise ValueError("When specifying `crosses`, the argument `crossing_dim` (dimensionality of the crossing "
                             "space) should be specified as well.")
        if any(key not in feature_names for key in cross):
            raise ValueError("All features referenced in the `crosses` argument should be present in the `features` "
                             f"dict. Received unknown features: {cross}")
        return Cross(cross, crossing_dim=self.crossing_dim)

    def _list_adaptable_preprocessors(self):
        names = []
        for name in self.features:
            preprocessor = self.preprocessors[name]
            if isinstance(preprocessor, Normalization) and preprocessor.input_mean is not None:
                continue  # mean and variance given
            if isinstance(preprocessor, TextVectorization) and preprocessor.has_input_vocabulary:
                continue  # vocabulary given
            if hasattr(preprocessor, "adapt"):
                names.append(name)
        return names

    def adapt(self, dataset):
        """Adapts each preprocessor that learns from data (a mean, a vocabulary, bin boundaries) on
        its column of ``dataset``: a ``mk.data.Dataset`` of dicts (rows or batches) or a dict of
        columns (lists or arrays)."""
        if isinstance(dataset, dict):
            dataset = Dataset.from_tensor_slices(dataset)
        if not isinstance(dataset, Dataset):
            raise ValueError("`adapt()` can only be called on a mk.data.Dataset or a dict of arrays/lists. "
                             f"Received instead: {dataset!r} (of type {type(dataset).__name__})")
        names = self._list_adaptable_preprocessors()
        columns = _column_batches(dataset, names)
        for name in names:
            self.preprocessors[name].adapt(iter(columns[name]))  # batches, not one array
        self._is_adapted = True
        self.get_encoded_features()  # finishes building: the encoders and the concatenation
        self.built = True
        self._sublayers_built = True

    def get_inputs(self):
        """The ``mk.Input`` of each feature (shape ``(None, 1)``), by name."""
        self._check_if_built()
        return self.inputs

    def get_encoded_features(self):
        """The encoded features as symbolic tensors of ``get_inputs()``: one (concat) or a dict."""
        self._check_if_adapted()
        if self.encoded_features is None:
            preprocessed = self._preprocess_features(self.inputs)
            crossed = self._cross_features(preprocessed)
            self.encoded_features = self._merge_features(preprocessed, crossed)
        return self.encoded_features

    def _preprocess_features(self, features):
        return {name: self.preprocessors[name](features[name]) for name in features}

    def _cross_features(self, features):
        return {cross.name: self.crossers[cross.name]([features[n] for n in cross.feature_names])
                for cross in self.crosses}

    def _merge_features(self, preprocessed, crossed):
        if not self._preprocessed_features_names:
            self._preprocessed_features_names = sorted(preprocessed)
            self._crossed_features_names = sorted(crossed)
        names = self._preprocessed_features_names + self._crossed_features_names
        values = [preprocessed[n] for n in self._preprocessed_features_names]
        values += [crossed[n] for n in self._crossed_features_names]
        if not self._sublayers_built:
            self._build_encoders(names, values)
        encoded = {}
        for name, value in zip(names, values):
            encoder = self.one_hot_encoders.get(name)
            encoded[name] = encoder(value) if encoder is not None else value
        if self.output_mode == "dict":
            return encoded
        return self.concat([encoded[name] for name in names])

    def _build_encoders(self, names, values):
        """Makes the multi-hot encoders of the 'one_hot' features and, in concat mode, checks that
        every feature is encoded as floats and makes the concatenation."""
        specs = [self.features[n] for n in self._preprocessed_features_names]
        specs += [self.crosses_by_name[n] for n in self._crossed_features_names]
        for name, value, spec in zip(names, values, specs):
            dtype = _dtype_name(value)
            if spec.output_mode == "one_hot":
                if not dtype.startswith("int"):
                    raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. Thus its preprocessor should "
                                     f"return an integer dtype. Instead it returns a {dtype} dtype.")
                preprocessor = self.preprocessors.get(name) or self.crossers.get(name)
                cardinality = _cardinality(preprocessor)
                if cardinality is None:
                    raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. However it isn't a standard "
                                     "feature and the dimensionality of its output space is not known, thus it "
                                     "cannot be one-hot encoded. Try using `output_mode='int'`.")
                self.one_hot_encoders[name] = CategoryEncoding(num_tokens=cardinality, output_mode="multi_hot")
                dtype = "float32"
            if self.output_mode == "concat" and (dtype.startswith("int") or dtype == "string"):
                raise ValueError(f"Cannot concatenate features because feature '{name}' has not been encoded (it "
                                 f"has dtype {dtype}). Consider using `output_mode='dict'`.")
        if self.output_mode == "concat":
            self.concat = TFDConcat(axis=-1)

    def _check_if_adapted(self):
        if not self._is_adapted:
            if self._list_adaptable_preprocessors():
                raise ValueError("You need to call `.adapt(dataset)` on the FeatureSpace before you can start "
                                 "using it.")
            self._is_adapted = True

    def _check_if_built(self):
        if not self._sublayers_built:
            self._check_if_adapted()
            self.get_encoded_features()
            self._sublayers_built = True

    def __call__(self, data):
        """Encodes ``data``: a dict of columns (lists, NumPy arrays, Tensors), batched or one row
        each (scalars; the output then has no batch axis)."""
        self._check_if_built()
        if not isinstance(data, dict):
            raise ValueError(f"A FeatureSpace can only be called with a dict. Received: data={data!r} (of type "
                             f"{type(data).__name__})")
        if any(_is_traced(v) for v in data.values()):
            raise HostOnlyCall(f"FeatureSpace '{self.name}' computes on the host and was called on traced values")
        if any(isinstance(v, KerasTensor) for v in data.values()):
            preprocessed = self._preprocess_features(data)
            return self._merge_features(preprocessed, self._cross_features(preprocessed))
        columns, rebatched = {}, False
        for name in self.features:
            if name not in data:
                raise ValueError(f"FeatureSpace '{self.name}' expects the features {sorted(self.features)}; the "
                                 f"input lacks '{name}' (it has {sorted(data)})")
            columns[name], one_row = _as_column(data[name], name)
            rebatched = rebatched or one_row
        preprocessed = self._preprocess_features({k: out_tensor(v) for k, v in columns.items()})
        merged = self._merge_features(preprocessed, self._cross_features(preprocessed))
        if not rebatched:
            return merged
        if self.output_mode == "concat":
            if merged.shape[0] != 1:
                raise ValueError(f"Expected rebatched data to have batch size 1. Received: shape={merged.shape}")
            return _squeeze_first(merged)
        return {k: _squeeze_first(v) if len(v.shape) == 2 and v.shape[0] == 1 else v for k, v in merged.items()}

    def get_config(self):
        return {"features": serialize_keras_object(self.features), "output_mode": self.output_mode,
                "crosses": serialize_keras_object(self.crosses), "crossing_dim": self.crossing_dim,
                "hashing_dim": self.hashing_dim, "num_discretization_bins": self.num_discretization_bins}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self):
        return {name: (getattr(feature.preprocessor, "get_build_config", lambda: {})() or {})
                for name, feature in self.features.items()}

    def build_from_config(self, config):
        for name, build_config in config.items():
            preprocessor = self.features[name].preprocessor
            if not preprocessor.built and hasattr(preprocessor, "build_from_config") and build_config:
                preprocessor.build_from_config(build_config)
        self._is_adapted = True
        self.built = True  # its state comes from the file: saving it again needs no call first

    def save(self, filepath):
        """Saves the FeatureSpace to a ``.keras`` file (Keras 3's layout); ``mk.saving.load_model`` reloads it."""
        save_model(self, filepath)


def _is_traced(value):
    """Whether ``value`` is an abstract value of a jax trace (a map function traced with vmap)."""
    return is_tracer(value._value) if isinstance(value, Tensor) else is_tracer(value)


def _squeeze_first(x):
    if isinstance(x, StringTensor):
        return out_tensor(host_array(x)[0])
    return x[0] if isinstance(x, Tensor) else np.asarray(x)[0]


def _column_batches(dataset, names):
    """``{name: [batches of shape (batch, 1)]}`` for the features ``names`` of ``dataset``, read in
    one pass (Keras reads the dataset once per feature; a pipeline with maps of its own would run
    them that many times): rows are grouped in batches of 32, batches kept as they come."""
    out = {name: [] for name in names}
    rows = {name: [] for name in names}
    for element in dataset:
        if not isinstance(element, dict):
            raise ValueError("FeatureSpace.adapt() expects a Dataset of dicts of features, without labels; received "
                             f"elements of type {type(element).__name__}: map it first, e.g. ds.map(lambda x, y: x)")
        missing = [name for name in names if name not in element]
        if missing:
            raise ValueError(f"FeatureSpace.adapt(): the dataset's dicts lack the features {missing} (they have "
                             f"{sorted(element)})")
        for name in names:
            column = host_array(element[name])
            if column.ndim > 0:
                out[name].append(column[:, None] if column.ndim == 1 else column)
                continue
            rows[name].append(column)
            if len(rows[name]) == 32:
                out[name].append(np.stack(rows[name])[:, None])
                rows[name] = []
    for name in names:
        if rows[name]:
            out[name].append(np.stack(rows[name])[:, None])
    return out

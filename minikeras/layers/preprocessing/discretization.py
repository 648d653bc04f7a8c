"""``Discretization``: numbers to bucket ids by boundaries, learned by ``adapt`` as Keras 3 does
(its approximate-quantile summaries, merged batch by batch), computed with compiled ops."""
import numpy as np

from minikeras.layers.base import Layer
from minikeras.layers.preprocessing import adapt_data
from minikeras.layers.preprocessing.encoding import encode_tensor
from minikeras.layers.preprocessing.host_layer import as_input_tensor
from minikeras.ops.array import expand_dims
from minikeras.ops.elementwise import cast
from minikeras.ops.math import greater_equal
from minikeras.ops.reduce import reduce_sum
from minikeras.tensor import Tensor, to_array


def summarize(values, epsilon):
    """A batch's quantile summary: ~1/epsilon sorted values with their weights (Keras's)."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(np.size(values) / (1.0 / epsilon), 1)
    boundaries = values[int(step - 1)::int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def compress_summary(summary, epsilon):
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_weight_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_weight_percents, summary[0])
    cum_weights = np.interp(percents, cum_weight_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights))


def merge_summaries(prev_summary, next_summary, epsilon):
    merged = np.concatenate((prev_summary, next_summary), axis=1)
    merged = np.take(merged, np.argsort(merged[0]), axis=1)
    return compress_summary(merged, epsilon)


class Discretization(Layer):
    """Buckets numbers by ``bin_boundaries`` (Keras 3's ``Discretization``): with boundaries
    ``[0., 1., 2.]``, x < 0 is bucket 0, 0 <= x < 1 bucket 1, ..., x >= 2 bucket 3.

        mk.layers.Discretization(bin_boundaries=[0., 1., 2.])([[-1.5, 1.0, 3.4, 0.5]])   # [[0 2 3 1]]
        layer = mk.layers.Discretization(num_bins=4); layer.adapt(data)                 # quartiles

    Args:
      bin_boundaries: sorted boundaries, or None to learn ``num_bins`` buckets by ``adapt``.
      num_bins: the number of buckets ``adapt`` makes.
      epsilon: the quantile summaries' error tolerance (0.01).
      output_mode: 'int' (int32 ids), 'one_hot', 'multi_hot' or 'count'.
      sparse: False only.
    """

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False,
                 dtype=None, name=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        if sparse:
            raise ValueError(f"Discretization '{self.name}': `sparse=True` needs sparse tensors, which minikeras does "
                             "not have")
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(f"Invalid value for argument output_mode passed to Discretization. Expected one of "
                             f"['int', 'one_hot', 'multi_hot', 'count']. Received: output_mode={output_mode!r}")
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(f"Both `num_bins` and `bin_boundaries` should not be set. Received: `num_bins={num_bins}` "
                             f"and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        if bin_boundaries is not None and np.any(np.diff(np.asarray(bin_boundaries, np.float64).reshape(-1)) < 0):
            raise ValueError(f"Discretization '{self.name}': Expected sorted boundaries (ascending), received "
                             f"bin_boundaries={list(bin_boundaries)}")  # TF's Bucketize refuses them when called
        self.bin_boundaries = bin_boundaries
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = sparse
        self.summary = None if bin_boundaries else np.array([[], []], dtype="float32")

    def adapt(self, data, batch_size=None, steps=None):
        """Learns ``num_bins`` quantile boundaries from ``data`` (an array, Tensor, Dataset or
        iterable of batches), batch by batch."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, "
                             "use `num_bins` instead.")
        self.reset_state()
        for batch in adapt_data.batches(data, batch_size, steps):
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        data = np.asarray(data)
        if data.dtype.kind not in "biuf":
            raise TypeError(f"Discretization '{self.name}'.adapt expects numbers, received data of dtype "
                            f"{'string' if data.dtype == object else data.dtype}")
        self.summary = merge_summaries(summarize(data.astype("float32"), self.epsilon), self.summary, self.epsilon)

    def finalize_state(self):
        if self.num_bins is None:
            return
        self.bin_boundaries = compress_summary(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def reset_state(self):
        if self.num_bins is not None:
            self.summary = np.array([[], []], dtype="float32")

    def _convert_inputs(self, inputs):
        return as_input_tensor(inputs)

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at construction time or call "
                             "`adapt(dataset)` before you can start using the `Discretization` layer.")
        if inputs.dtype == object:
            raise TypeError(f"Discretization '{self.name}' expects numbers, received strings of shape {inputs.shape}")
        boundaries = Tensor(to_array(np.asarray(self.bin_boundaries, np.float32)))
        x = cast(inputs, "float32")
        ids = reduce_sum(cast(greater_equal(expand_dims(x, -1), boundaries), "int32"), axis=-1)
        if self.output_mode == "int":
            return ids
        return encode_tensor(ids, self.output_mode, len(self.bin_boundaries) + 1, f"Discretization '{self.name}'",
                             self.dtype)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return input_shape
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else self.num_bins
        if self.output_mode == "one_hot":
            if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
                return tuple(input_shape[:-1]) + (depth,)
            return tuple(input_shape) + (depth,)
        if input_shape and len(input_shape) >= 2:
            return (input_shape[0],) + tuple(input_shape[2:]) + (depth,)
        return (depth,)

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins, "epsilon": self.epsilon,
                "output_mode": self.output_mode, "sparse": self.sparse, "name": self.name,
                "dtype": self.dtype.name}

    @classmethod
    def from_config(cls, config):
        if config.get("bin_boundaries") is not None and config.get("num_bins") is not None:
            config = dict(config)
            boundaries = config.pop("bin_boundaries")
            layer = cls(**config)
            layer.bin_boundaries = boundaries
            return layer
        return cls(**config)

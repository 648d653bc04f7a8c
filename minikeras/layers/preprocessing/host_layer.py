"""The base of the preprocessing layers that compute on the host with NumPy (string lookups,
text vectorization, hashing): strings cannot enter compiled code, so these layers run eagerly,
before the compiled part of a model, and refuse to run inside a trace."""
import numpy as np

from minikeras.dtypes import string_refusal
from minikeras.layers.base import Layer
from minikeras.ragged import RaggedTensor
from minikeras.string_tensor import StringTensor, bytes_array, is_string_value, tracing_here
from minikeras.symbolic import KerasTensor, Node, any_symbolic
from minikeras.tensor import Tensor, Variable, to_array


def host_array(value):
    """A layer input as NumPy (strings: an object array of bytes)."""
    if isinstance(value, StringTensor) or is_string_value(value):
        return bytes_array(value)
    if isinstance(value, Variable):
        value = value.value()
    if isinstance(value, Tensor):
        return np.asarray(value.numpy())
    return np.asarray(value)


def out_tensor(array):
    """A NumPy result as an mk Tensor (object arrays as string Tensors)."""
    if array.dtype == object:
        return StringTensor.of_bytes(array)
    return Tensor(to_array(array))


def as_input_tensor(value):
    """A layer input as one Tensor: a list or array is one array (strings: a string Tensor)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, Variable):
        return value.value()
    return out_tensor(host_array(value))


class HostLayer(Layer):
    """A layer whose ``call`` computes with NumPy on the host; inputs may be strings.

    In a functional graph (``mk.Input``, a Sequential's build) its output is described by
    ``compute_output_shape`` and ``output_dtype`` instead of an abstract evaluation (jax cannot
    trace strings). A model whose leading layers are host layers runs them on the host before
    its compiled steps (``minikeras.trainers.host_prefix``).
    """

    runs_on_host = True
    takes_strings = True

    @property
    def output_dtype(self):
        """The dtype of the layer's outputs: int32 indices or float32 vectors by default."""
        return "int32" if getattr(self, "output_mode", "int") == "int" else "float32"

    def _symbolic_call(self, inputs, args, training, kwargs):
        self.built = True
        shape = tuple(self.compute_output_shape(tuple(inputs.shape)))
        outputs = KerasTensor(shape, self.output_dtype)
        nodes = self._inbound_nodes()
        nodes.append(Node(self, (inputs,) + tuple(args), kwargs, outputs, index=len(nodes)))
        self._output_shape = shape
        return outputs

    def __call__(self, inputs, *args, **kwargs):
        if tracing_here() and not any_symbolic(inputs):
            raise string_refusal(f"{type(self).__name__} '{self.name}' runs on the host and was called inside a "
                                 "compiled function. A model runs its host layers ahead of its compiled steps only "
                                 "where it can be cut after them (model.host_split()): the leading layers of a "
                                 "Sequential, and host layers that read a functional model's Inputs (or lead a "
                                 "Sequential called on them). A subclassed model's call() is Python code that cannot "
                                 "be cut, and a train_step/test_step/predict_step of your own that calls self(x) runs "
                                 "every layer: apply this layer to the data first (Dataset.map), build the model "
                                 "with the functional API, or call model.host_split()[1] in your step")
        if isinstance(inputs, RaggedTensor):
            return self._call_ragged(inputs, args, kwargs)
        return super().__call__(inputs, *args, **kwargs)

    def _call_ragged(self, ragged, args, kwargs):
        """A RaggedTensor in, one out with the same rows, as TF: for a layer that maps each value
        to one value (``output_mode='int'``), applied to the rows' values one after the other."""
        if getattr(self, "output_mode", "int") != "int" or not getattr(self, "maps_values_one_to_one", False):
            raise TypeError(f"{type(self).__name__} '{self.name}' takes a RaggedTensor only with output_mode='int' "
                            f"(one output per value); received one with output_mode="
                            f"{getattr(self, 'output_mode', None)!r}: pad it first with .to_tensor()")
        values = super().__call__(ragged.values, *args, **kwargs)
        return RaggedTensor.from_row_splits(host_array(values), host_array(ragged.row_splits), validate=False)

    def _convert_inputs(self, inputs):
        return as_input_tensor(inputs)

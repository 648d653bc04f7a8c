"""The classes and functions Keras 3.15's layer tests define for their ``run_layer_test`` calls,
written on minikeras's public API for tests/test_keras_layer_cases.py.

``cases.json`` names them (a layer's class name, a function's ``__name__``); ``TEST_OBJECTS``
maps each name to its port here. Each port computes what Keras's does:

- ``ExampleWrapper`` (``core/wrapper_test.py``): a Wrapper that calls its layer and casts to
  its compute dtype;
- ``OneStateRNNCell``, ``TwoStatesRNNCell`` (``rnn/rnn_test.py``): cells with ones-initialized
  kernels (``TwoStatesRNNCell`` reads ``states[0]`` twice, as Keras's does);
- ``RNNCellWithDropout`` (``rnn/dropout_rnn_cell_test.py``): a one-state cell with input and
  recurrent dropout drawn from its own ``SeedGenerator`` (Keras's ``DropoutRNNCell`` mixin is
  not public, so the masks are drawn here with ``keras.random.dropout``);
- ``square``, ``stacker``, ``stacker_shape`` (``core/lambda_layer_test.py``): Lambda functions.
"""
import minikeras as mk

ops = mk.keras.ops


class ExampleWrapper(mk.layers.Wrapper):
    def call(self, inputs, **kwargs):
        return ops.cast(self.layer(inputs, **kwargs), self.compute_dtype)


class OneStateRNNCell(mk.layers.Layer):
    def __init__(self, units, state_size=None, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = state_size if state_size else units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones", name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer="ones",
                                                name="recurrent_kernel")
        self.built = True

    def call(self, inputs, states):
        output = ops.matmul(inputs, self.kernel) + ops.matmul(states[0], self.recurrent_kernel)
        return output, [output]

    def get_config(self):
        return {**super().get_config(), "units": self.units, "state_size": self.state_size}


class TwoStatesRNNCell(mk.layers.Layer):
    def __init__(self, units, state_size=None, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = state_size if state_size else [units, units]
        self.output_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones", name="kernel")
        self.recurrent_kernel_1 = self.add_weight(shape=(self.units, self.units), initializer="ones",
                                                  name="recurrent_kernel_1")
        self.recurrent_kernel_2 = self.add_weight(shape=(self.units, self.units), initializer="ones",
                                                  name="recurrent_kernel_2")
        self.built = True

    def call(self, inputs, states):
        h = ops.matmul(inputs, self.kernel)
        output_1 = h + ops.matmul(states[0], self.recurrent_kernel_1)
        output_2 = h + ops.matmul(states[0], self.recurrent_kernel_2)
        return output_1 + output_2, [output_1, output_2]

    def get_config(self):
        return {**super().get_config(), "units": self.units, "state_size": self.state_size}


class RNNCellWithDropout(mk.layers.Layer):
    def __init__(self, units, dropout=0.5, recurrent_dropout=0.5, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.seed_generator = mk.keras.random.SeedGenerator(seed)
        self.units = units
        self.state_size = units
        self.dropout = dropout
        self.recurrent_dropout = recurrent_dropout

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones", name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer="ones",
                                                name="recurrent_kernel")
        self.built = True

    def call(self, inputs, states, training=False):
        prev_output = states[0]
        if training:
            inputs = mk.keras.random.dropout(inputs, self.dropout, seed=self.seed_generator)
            prev_output = mk.keras.random.dropout(prev_output, self.recurrent_dropout, seed=self.seed_generator)
        output = ops.matmul(inputs, self.kernel) + ops.matmul(prev_output, self.recurrent_kernel)
        return output, [output]

    def get_config(self):
        return {**super().get_config(), "units": self.units, "dropout": self.dropout,
                "recurrent_dropout": self.recurrent_dropout, "seed": self.seed}


def square(x):
    return ops.square(x)


def stacker(x):
    return ops.concatenate([x, x], axis=1)


def stacker_shape(s):
    return (s[0], s[1] * 2)


TEST_OBJECTS = {obj.__name__: obj for obj in (ExampleWrapper, OneStateRNNCell, TwoStatesRNNCell, RNNCellWithDropout,
                                                square, stacker, stacker_shape)}

"""The Layer lifecycle (build, add_weight, names, freezing, weights, configs, input checks) and
the core layers: Dense, Flatten, Activation, Reshape, Dropout, Input."""
import numpy as np
import pytest

import minikeras as mk
from minikeras.module import clear_session

layers = mk.layers


class Scale(layers.Layer):
    """A custom layer in the Keras idiom: weights made in build() with add_weight."""

    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(input_shape[-1],), initializer="ones")
        self.offset = self.add_weight(name="offset", shape=(input_shape[-1],),
                                      initializer=mk.initializers.Constant(0.5), trainable=True)
        self.calls = self.add_weight(name="calls", shape=(), initializer="zeros", trainable=False, dtype="int32")

    def call(self, inputs):
        self.calls.assign_add(1)
        return inputs * self.scale + self.offset


def test_layers_build_lazily_on_first_call():
    dense = layers.Dense(4)
    assert not dense.built and dense.weights == []
    out = dense(np.ones((2, 3), np.float32))
    assert dense.built and out.shape == (2, 4)
    assert [w.shape for w in dense.weights] == [(3, 4), (4,)]
    np.testing.assert_array_equal(dense.bias.numpy(), np.zeros(4))  # bias_initializer='zeros'
    limit = np.sqrt(6 / (3 + 4))  # glorot_uniform
    assert np.all(np.abs(dense.kernel.numpy()) <= limit) and np.std(dense.kernel.numpy()) > 0


def test_add_weight_name_shape_initializer_trainable_dtype():
    layer = Scale(name="scale_layer")
    out = layer(np.full((2, 3), 2.0, np.float32))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 2.5))
    assert [w.path for w in layer.weights] == ["scale_layer/scale", "scale_layer/offset", "scale_layer/calls"]
    assert [w.name for w in layer.trainable_weights] == ["scale", "offset"]
    assert [w.name for w in layer.non_trainable_weights] == ["calls"]
    assert layer.calls.dtype == mk.int32 and layer.scale.dtype == mk.float32
    layer(np.ones((2, 3), np.float32))
    assert int(layer.calls.numpy()) == 2
    assert layer.count_params() == 7


def test_a_layer_that_skips_super_init_gets_a_pointer():
    class Forgetful(layers.Layer):
        def __init__(self, units):
            self.units = units

        def call(self, inputs):
            return inputs

    with pytest.raises(AttributeError, match=r"Forgetful.*must call super\(\).__init__"):
        Forgetful(3)(np.ones((1, 2), np.float32))


def test_automatic_names_are_unique_and_paths_keras_style():
    clear_session()
    first, second = layers.Dense(2), layers.Dense(2)
    assert (first.name, second.name) == ("dense", "dense_1")
    assert [layers.Conv2D(1, 1).name, layers.BatchNormalization().name, layers.MaxPooling2D().name,
            layers.GlobalAveragePooling2D().name] == [
        "conv2d", "batch_normalization", "max_pooling2d", "global_average_pooling2d"]
    second(np.ones((1, 3), np.float32))
    assert [w.path for w in second.weights] == ["dense_1/kernel", "dense_1/bias"]


def test_float64_numpy_input_gives_float32_output():
    dense = layers.Dense(4)
    out = dense(np.ones((2, 3), np.float64))
    assert out.dtype == mk.float32 and dense.kernel.dtype == mk.float32
    assert layers.Flatten()(np.ones((2, 3, 1))).dtype == mk.float32
    assert layers.Flatten()(np.ones((2, 3), np.int32)).dtype == mk.int32  # integers are not cast


def test_trainable_false_freezes_weights_and_the_tape_stops_watching_them():
    frozen = layers.Dense(4, trainable=False)
    x = np.ones((2, 3), np.float32)
    frozen(x)
    assert frozen.trainable_weights == [] and len(frozen.non_trainable_weights) == 2

    dense = layers.Dense(4)
    dense(x)
    dense.trainable = False
    assert dense.trainable_weights == [] and [w.name for w in dense.non_trainable_weights] == ["kernel", "bias"]
    with mk.GradientTape() as tape:
        y = mk.reduce_sum(dense(x))
    assert tuple(tape.watched_variables()) == ()
    assert tape.gradient(y, dense.kernel) is None

    dense.trainable = True
    with mk.GradientTape() as tape:
        y = mk.reduce_sum(dense(x))
    assert len(tape.watched_variables()) == 2
    np.testing.assert_allclose(tape.gradient(y, dense.kernel).numpy(), np.full((3, 4), 2.0))


def test_get_and_set_weights_check_count_and_shape():
    dense = layers.Dense(2, name="dense_sw")
    dense(np.ones((1, 3), np.float32))
    kernel, bias = dense.get_weights()
    assert isinstance(kernel, np.ndarray) and kernel.shape == (3, 2) and bias.shape == (2,)
    new = [np.arange(6, dtype=np.float32).reshape(3, 2), np.array([1.0, -1.0], np.float32)]
    dense.set_weights(new)
    np.testing.assert_array_equal(dense.kernel.numpy(), new[0])
    np.testing.assert_allclose(dense(np.ones((1, 3), np.float32)).numpy(), [[7.0, 8.0]])
    with pytest.raises(ValueError, match=r"expects 2 weights .*dense_sw/kernel.* received 1"):
        dense.set_weights(new[:1])
    with pytest.raises(ValueError, match=r"dense_sw/kernel.*\(3, 2\).*\(2, 3\)"):
        dense.set_weights([new[0].T, new[1]])
    np.testing.assert_array_equal(dense.kernel.numpy(), new[0])  # nothing changed on error


def test_count_params_of_an_unbuilt_layer_is_an_error():
    dense = layers.Dense(5, name="not_built")
    with pytest.raises(ValueError, match="not_built.*isn't built"):
        dense.count_params()
    dense.build((None, 7))
    assert dense.count_params() == 7 * 5 + 5


def test_compute_output_shape_does_not_need_weights():
    assert layers.Dense(5).compute_output_shape((None, 3)) == (None, 5)
    assert layers.Dense(5).compute_output_shape((None, 2, 3)) == (None, 2, 5)
    assert layers.Flatten().compute_output_shape((None, 4, 4, 2)) == (None, 32)
    assert layers.Reshape((2, -1)).compute_output_shape((None, 6)) == (None, 2, 3)
    assert layers.Conv2D(4, 3).compute_output_shape((None, 8, 8, 2)) == (None, 6, 6, 4)
    assert layers.Conv2D(4, 3, strides=2, padding="same").compute_output_shape((None, 8, 8, 2)) == (None, 4, 4, 4)
    assert layers.MaxPooling2D().compute_output_shape((None, 8, 8, 2)) == (None, 4, 4, 2)
    assert layers.GlobalAveragePooling2D().compute_output_shape((None, 8, 8, 2)) == (None, 2)
    assert layers.Dropout(0.5).compute_output_shape((None, 3)) == (None, 3)
    assert layers.AveragePooling2D(3, strides=2).compute_output_shape((None, 7, 8, 2)) == (None, 3, 3, 2)
    assert layers.Conv2D(1, 3, dilation_rate=2).compute_output_shape((None, 7, 8, 2)) == (None, 3, 4, 1)
    assert layers.BatchNormalization().compute_output_shape((None, 5)) == (None, 5)


def test_compute_output_shape_of_a_custom_layer_by_abstract_evaluation():
    class Double(layers.Layer):
        def call(self, inputs):
            return mk.concat([inputs, inputs], axis=-1)

    assert Double().compute_output_shape((None, 3)) == (None, 6)


ALL_LAYERS = [
    lambda: layers.Dense(3, activation="relu", use_bias=False, kernel_initializer="he_normal", name="d"),
    lambda: layers.Dense(3, kernel_initializer=mk.initializers.RandomNormal(stddev=0.1, seed=3), dtype="float16"),
    lambda: layers.Conv2D(4, (3, 2), strides=(1, 2), padding="same", dilation_rate=1, activation="tanh",
                          use_bias=False),
    lambda: layers.Flatten(),
    lambda: layers.MaxPooling2D(pool_size=3, strides=1, padding="same"),
    lambda: layers.AveragePooling2D(pool_size=(2, 3)),
    lambda: layers.GlobalAveragePooling2D(keepdims=True),
    lambda: layers.GlobalMaxPooling2D(),
    lambda: layers.AvgPool2D(),
    lambda: layers.Dropout(0.3, noise_shape=(None, 1)),
    lambda: layers.Dropout(0.3, seed=4),
    lambda: layers.Activation("softmax"),
    lambda: layers.Reshape((4, -1)),
    lambda: layers.BatchNormalization(momentum=0.9, epsilon=1e-5, center=False),
    lambda: layers.InputLayer(shape=(5, 2)),
    lambda: layers.Dense(2, trainable=False, input_shape=(7,)),
]


@pytest.mark.parametrize("make", ALL_LAYERS, ids=lambda make: type(make()).__name__)
def test_get_config_from_config_round_trip(make):
    layer = make()
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert type(clone) is type(layer)
    assert clone.get_config() == config
    assert clone.name == layer.name and clone.trainable == layer.trainable
    assert vars(clone).keys() == vars(layer).keys()
    for key, value in vars(layer).items():  # every constructor argument survives
        if not key.startswith("_") and isinstance(value, (int, float, str, tuple, type(None))):
            assert getattr(clone, key) == value, key


def test_from_config_rebuilds_the_same_function():
    dense = layers.Dense(3, activation="relu")
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    expected = dense(x).numpy()
    clone = layers.Dense.from_config(dense.get_config())
    clone(x)
    clone.set_weights(dense.get_weights())
    np.testing.assert_allclose(clone(x).numpy(), expected)


def test_wrong_input_size_names_the_layer_and_the_shapes():
    clear_session()
    # zeros: no random draw to compile for a new weight shape
    model = mk.Sequential([layers.Dense(4, kernel_initializer="zeros", input_shape=(784,)),
                           layers.Dense(4, kernel_initializer="zeros")])
    assert model.layers[0].name == "dense"
    with pytest.raises(ValueError) as info:
        model(np.zeros((64, 28, 28), np.float32))
    assert str(info.value) == "Dense 'dense' expects input with last dimension 784, received shape (64, 28, 28)"
    dense = layers.Dense(4, kernel_initializer="zeros", name="dense_1")
    dense(np.zeros((2, 784), np.float32))
    with pytest.raises(ValueError, match=r"Dense 'dense_1' expects input with last dimension 784, received shape "
                                         r"\(64, 28, 28\)"):
        dense(np.zeros((64, 28, 28), np.float32))
    with pytest.raises(ValueError, match=r"layer 'dense_1'.*min_ndim=2.*ndim=1.*\(784,\)"):
        dense(np.zeros((784,), np.float32))


def test_wrong_input_rank_for_conv_and_pooling():
    with pytest.raises(ValueError, match=r"layer 'conv_rank'.*expected ndim=4, found ndim=3.*\(2, 5, 5\)"):
        layers.Conv2D(2, 3, name="conv_rank")(np.zeros((2, 5, 5), np.float32))
    with pytest.raises(ValueError, match=r"layer 'pool_rank'.*expected ndim=4, found ndim=2"):
        layers.MaxPooling2D(name="pool_rank")(np.zeros((2, 5), np.float32))


def test_invalid_constructor_arguments():
    with pytest.raises(ValueError, match="units"):
        layers.Dense(0)
    with pytest.raises(ValueError, match="filters"):
        layers.Conv2D(-1, 3)
    with pytest.raises(ValueError, match="padding.*Received: full"):
        layers.Conv2D(2, 3, padding="full")
    with pytest.raises(ValueError, match="kernel_size"):
        layers.Conv2D(2, (3, 3, 3))
    with pytest.raises(ValueError, match="rate"):
        layers.Dropout(1.0)
    with pytest.raises(TypeError, match="unexpected keyword.*units_"):
        layers.Dense(3, units_=4)
    with pytest.raises(ValueError, match="Unknown activation|activation"):
        layers.Activation("relux")


def test_flatten_activation_reshape():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
    np.testing.assert_array_equal(layers.Flatten()(x).numpy(), x.reshape(2, 12))
    np.testing.assert_array_equal(layers.Activation("relu")(x).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(layers.Activation(mk.nn.sigmoid)(x).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_array_equal(layers.Reshape((4, 3))(x).numpy(), x.reshape(2, 4, 3))
    np.testing.assert_array_equal(layers.Reshape((-1, 2))(x).numpy(), x.reshape(2, 6, 2))
    with pytest.raises(ValueError, match=r"Reshape 'bad_reshape'.*\(3, 4\).*\(5, 2\)"):
        layers.Reshape((5, 2), name="bad_reshape")(x)


def test_dense_on_rank_3_input_uses_the_last_axis():
    dense = layers.Dense(2)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    out = dense(x)
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(out.numpy(), x @ kernel + bias, rtol=1e-5, atol=1e-6)


# -- Dropout --------------------------------------------------------------------------------
X_DROP = np.ones((50, 40), np.float32)


def test_dropout_is_the_identity_unless_training():
    drop = layers.Dropout(0.5)
    np.testing.assert_array_equal(drop(X_DROP).numpy(), X_DROP)
    np.testing.assert_array_equal(drop(X_DROP, training=False).numpy(), X_DROP)


def test_dropout_in_training_scales_survivors_and_draws_a_fresh_mask_each_call():
    drop = layers.Dropout(0.25)
    first, second = drop(X_DROP, training=True).numpy(), drop(X_DROP, training=True).numpy()
    for out in (first, second):
        assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
        assert abs((out == 0).mean() - 0.25) < 0.05
    assert not np.array_equal(first, second)


def test_dropout_draws_fresh_masks_inside_mk_function():
    drop = layers.Dropout(0.5)

    @mk.function
    def step(x):
        return drop(x, training=True)

    first, second = step(mk.constant(X_DROP)).numpy(), step(mk.constant(X_DROP)).numpy()
    assert step.experimental_get_tracing_count() == 1
    assert set(np.unique(first)) <= {0.0, 2.0} and abs((first == 0).mean() - 0.5) < 0.05
    assert not np.array_equal(first, second)


def test_dropout_masks_repeat_under_a_fixed_seed():
    drop = layers.Dropout(0.5)
    mk.random.set_seed(7)
    a = drop(X_DROP, training=True).numpy()
    mk.random.set_seed(7)
    b = drop(X_DROP, training=True).numpy()
    np.testing.assert_array_equal(a, b)


def test_training_flag_reaches_dropout_inside_a_model():
    model = mk.Sequential([layers.Dropout(0.5)])
    np.testing.assert_array_equal(model(X_DROP).numpy(), X_DROP)
    assert (model(X_DROP, training=True).numpy() == 0).any()


# -- Input ----------------------------------------------------------------------------------
def test_input_layer_starts_a_sequential_and_checks_the_example_shape():
    model = mk.Sequential([mk.Input(shape=(3,)), layers.Dense(2)])
    assert model.built and [w.shape for w in model.weights] == [(3, 2), (2,)]
    assert len(model.layers) == 1  # Keras does not list the InputLayer
    with pytest.raises(ValueError, match=r"expects examples of shape \(3,\).*\(4, 5\)"):
        model(np.zeros((4, 5), np.float32))
    with pytest.raises(ValueError, match="Input must be the first layer"):
        mk.Sequential([layers.Dense(2), mk.Input(shape=(3,))])
    with pytest.raises(ValueError, match="shape"):
        layers.InputLayer()

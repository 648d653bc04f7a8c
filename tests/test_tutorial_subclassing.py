"""Patterns of tensorflow.org's tutorials and the Keras guides on subclassed models and layers,
each checked against what TF 2.21 / Keras 3.15 do with the same code: a Model subclass without
``call`` (the convolutional VAE's CVAE, text generation's OneStep), a subclass made functional
by the arguments it passes, a layer called with keyword arguments only, a subclassed model whose
first call slices by ``mk.shape(x)[1]`` (the Transformer tutorial), ``name=''``, and
``mk.random.split``."""
import numpy as np
import pytest

import minikeras as mk
from minikeras.models.model import Functional


class CVAE(mk.Model):
    """The convolutional VAE tutorial's model, small: encode, reparameterize, decode, no call."""

    def __init__(self, latent_dim):
        super().__init__()
        self.latent_dim = latent_dim
        self.encoder = mk.Sequential([mk.layers.InputLayer(input_shape=(6,)), mk.layers.Dense(2 * latent_dim)])
        self.decoder = mk.Sequential([mk.layers.InputLayer(input_shape=(latent_dim,)), mk.layers.Dense(6)])

    def sample(self, eps):
        return self.decode(eps)

    def encode(self, x):
        mean, logvar = mk.split(self.encoder(x), num_or_size_splits=2, axis=1)
        return mean, logvar

    def decode(self, z):
        return self.decoder(z)


class OneStep(mk.Model):
    """The text-generation tutorial's OneStep: three positional arguments, only generate_one_step."""

    def __init__(self, model, chars_from_ids, ids_from_chars, temperature=1.0):
        super().__init__()
        self.temperature = temperature
        self.model = model
        self.chars_from_ids = chars_from_ids
        self.ids_from_chars = ids_from_chars

    def generate_one_step(self, inputs):
        return self.model(inputs) / self.temperature


def test_a_subclass_without_call_is_constructed_as_a_subclassed_model():
    # Keras 3: CVAE(2) and OneStep(model, a, b) construct (Functional only with inputs, outputs)
    cvae = CVAE(2)
    assert not isinstance(cvae, Functional)
    mean, logvar = cvae.encode(mk.ones((3, 6)))
    assert mean.shape == (3, 2) and logvar.shape == (3, 2) and cvae.sample(mean).shape == (3, 6)
    one = OneStep(mk.layers.Dense(4), "chars", "ids", temperature=2.0)
    assert not isinstance(one, Functional)
    assert one.generate_one_step(mk.ones((1, 3))).shape == (1, 4)


def test_the_arguments_given_to_model_init_make_a_subclass_functional():
    class Wrapped(mk.Model):  # builds its graph in __init__, as Keras 3 allows
        def __init__(self, units):
            inputs = mk.Input((3,))
            super().__init__(inputs=inputs, outputs=mk.layers.Dense(units)(inputs))

    class Custom(mk.Model):  # the customizing-fit guide: CustomModel(inputs, outputs)
        def train_step(self, data):
            return super().train_step(data)

    inputs = mk.Input((3,))
    for model in (Wrapped(2), Custom(inputs, mk.layers.Dense(2)(inputs)),
                  Custom(inputs, outputs=mk.layers.Dense(2)(inputs))):
        assert isinstance(model, Functional)
        assert model(np.ones((4, 3), "float32")).shape == (4, 2)
    assert isinstance(Wrapped(2), Wrapped) and isinstance(Custom(inputs, inputs), Custom)


class Decoder(mk.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = mk.layers.Dense(3)

    def call(self, x, context):
        return self.dense(x) + mk.reduce_mean(context)


def test_a_layer_takes_its_first_argument_by_name():
    # Keras 3: decoder(x=tokens, context=encoded) is decoder(tokens, context=encoded)
    decoder = Decoder()
    x, context = np.ones((2, 4), "float32"), np.full((2, 5), 2.0, "float32")
    by_name = decoder(x=x, context=context)
    np.testing.assert_allclose(by_name.numpy(), decoder(x, context=context).numpy())
    np.testing.assert_allclose(by_name.numpy(), decoder(x, context).numpy())
    dense = mk.layers.Dense(2)
    assert dense(inputs=x).shape == (2, 2)
    with pytest.raises(TypeError, match="was called without inputs: pass them as the first argument or as x="):
        decoder(context=context)


class PositionalEmbedding(mk.layers.Layer):
    """The Transformer tutorial's slice of a positional table by the sequence's length."""

    def __init__(self):
        super().__init__()
        self.pos_encoding = mk.constant(np.arange(64 * 4, dtype="float32").reshape(64, 4))

    def call(self, x):
        length = mk.shape(x)[1]
        return x + self.pos_encoding[mk.newaxis, :length, :]


class Transformer(mk.Model):
    def __init__(self):
        super().__init__()
        self.pos = PositionalEmbedding()
        self.dense = mk.layers.Dense(2)

    def call(self, inputs):
        context, x = inputs
        return self.dense(self.pos(x)) + mk.reduce_mean(context)


def test_first_call_of_a_subclassed_model_runs_call_on_the_inputs():
    model = Transformer()
    out = model((np.zeros((2, 5, 4), "float32"), np.zeros((2, 7, 4), "float32")))
    assert out.shape == (2, 7, 2) and model.built and len(model.weights) == 2
    assert model.get_build_config() == {"input_shape": ((2, 5, 4), (2, 7, 4))}
    # and build(shapes), which evaluates call abstractly, where a static size is a number too
    other = Transformer()
    other.build(((None, 5, 4), (None, 7, 4)))
    assert len(other.weights) == 2


def test_a_static_size_of_mk_shape_is_a_number_where_shapes_are_evaluated():
    assert tuple(PositionalEmbedding().compute_output_shape((None, 7, 4))) == (None, 7, 4)
    inputs = mk.Input((7, 4))
    assert PositionalEmbedding()(inputs).shape == (None, 7, 4)


def test_an_empty_name_is_kept():
    class Block(mk.layers.Layer):
        def __init__(self):
            super().__init__(name="")

    class Net(mk.Model):
        def __init__(self):
            super().__init__(name="")

    assert Block().name == "" and Net().name == ""  # TF 2.21 / Keras 3: ''
    assert mk.layers.Dense(2).name.startswith("dense")


def test_random_split_gives_num_seeds_of_the_seed_dtype():
    # tf.random.split(tf.constant([1, 2]), num=3): shape (3, 2) int32, a pure function of the seed
    seeds = mk.random.split(mk.constant([1, 2]), num=3)
    assert seeds.shape == (3, 2) and seeds.dtype == mk.int32
    np.testing.assert_array_equal(seeds.numpy(), mk.random.split(mk.constant([1, 2]), num=3).numpy())
    assert len({tuple(row) for row in seeds.numpy().tolist()}) == 3
    assert mk.random.split(mk.constant([1, 2])).shape == (2, 2)
    traced = mk.function(lambda s: mk.random.split(s, num=3))(mk.constant([1, 2]))
    np.testing.assert_array_equal(traced.numpy(), seeds.numpy())
    draw = mk.random.stateless_uniform((2,), seed=seeds[0])
    np.testing.assert_array_equal(draw.numpy(), mk.random.stateless_uniform((2,), seed=seeds[0]).numpy())
    with pytest.raises(mk.errors.InvalidArgumentError, match="seed must have shape"):
        mk.random.split(mk.constant([1, 2, 3]))

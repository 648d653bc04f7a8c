"""What the recurrent models' compiled programs contain, and how often they are traced:

- ``fit``'s train step (``model.train_step`` under ``mk.function``, as ``fit`` compiles it) with
  ``loss='sparse_categorical_crossentropy'`` does the same work on arrays as the hand-written tape
  step with ``SparseCategoricalCrossentropy()`` (only its loss tracker's scalars are extra): the
  integer labels, in particular, are not cast to float and back;
- the text-generation tutorial's one-step model, fed its own state and drawn id back, is traced
  once for all its calls.
"""
import collections

import jax
import numpy as np
from jax.extend.core import jaxprs_in_params

import minikeras as mk
from minikeras.tensor import Tensor


def _primitive_counts(jaxpr, arrays_only=False):
    """How many times each primitive occurs in ``jaxpr``, sub-jaxprs (scan bodies, jits) included;
    with ``arrays_only``, only the equations with a non-scalar input or output."""
    counts = collections.Counter()

    def walk(j):
        for eqn in j.eqns:
            shapes = [getattr(v.aval, "shape", ()) for v in list(eqn.invars) + list(eqn.outvars)]
            if not arrays_only or any(shapes):
                counts[eqn.primitive.name] += 1
            for sub in jaxprs_in_params(eqn.params):
                walk(sub)
    walk(jaxpr.jaxpr)
    return counts


def _lstm_classifier():
    model = mk.Sequential([mk.layers.LSTM(4), mk.layers.Dense(3, activation="softmax")])
    model.build((None, None, 2))
    return model


def test_compiled_sparse_loss_keeps_integer_labels():
    model = _lstm_classifier()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    y = np.array([0, 2, 1, 2], np.int32)
    p = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3], [0.6, 0.2, 0.2]], np.float32)
    jaxpr = jax.make_jaxpr(lambda y, p: model.loss(Tensor(y), Tensor(p))._value)(y, p)
    assert _primitive_counts(jaxpr)["convert_element_type"] == 0, jaxpr
    expected = -np.mean(np.log(p[np.arange(4), y]))
    np.testing.assert_allclose(model.loss(y, p).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(model.loss(y.astype("float32"), p).numpy(), expected, rtol=1e-6)  # float labels too


def test_fit_step_has_no_array_op_the_tape_step_lacks():
    rng = np.random.default_rng(0)
    x = mk.constant(rng.normal(size=(4, 3, 2)).astype("float32"))
    y = mk.constant(np.array([0, 2, 1, 2], np.int32))

    tape_model = _lstm_classifier()
    optimizer, loss_fn = mk.optimizers.Adam(), mk.losses.SparseCategoricalCrossentropy()

    @mk.function
    def tape_step(x, y):
        with mk.GradientTape() as tape:
            loss = loss_fn(y, tape_model(x, training=True))
        grads = tape.gradient(loss, tape_model.trainable_variables)
        optimizer.apply_gradients(zip(grads, tape_model.trainable_variables))
        return loss

    fit_model = _lstm_classifier()
    fit_model.compile(optimizer=mk.optimizers.Adam(), loss="sparse_categorical_crossentropy")
    fit_step = mk.function(fit_model.train_step)  # what fit compiles
    tape_step(x, y)
    fit_step((x, y))
    # the loss tracker (a Mean of the loss) adds scalar work only; Adam's step count is cast in both
    tape_counts = _primitive_counts(tape_step.programs()[0].jaxpr, arrays_only=True)
    fit_counts = _primitive_counts(fit_step.programs()[0].jaxpr, arrays_only=True)
    assert fit_counts == tape_counts, (fit_counts - tape_counts, tape_counts - fit_counts)

class _CharModel(mk.Model):
    """The text-generation tutorial's model (examples/text_generation.py), tiny."""

    def __init__(self, vocab_size, embedding_dim, rnn_units):
        super().__init__()
        self.embedding = mk.layers.Embedding(vocab_size, embedding_dim)
        self.gru = mk.layers.GRU(rnn_units, return_sequences=True, return_state=True)
        self.dense = mk.layers.Dense(vocab_size)

    def call(self, inputs, states=None, return_state=False, training=False):
        x = self.embedding(inputs, training=training)
        x, states = self.gru(x, initial_state=states, training=training)
        x = self.dense(x, training=training)
        return (x, states) if return_state else x


def test_one_step_generator_is_traced_once():
    model = _CharModel(7, 3, 5)

    @mk.function
    def generate_one_step(input_ids, states):
        logits, states = model(input_ids, states=states, return_state=True)
        return mk.squeeze(mk.random.categorical(logits[:, -1, :] / 0.5, num_samples=1), axis=-1), states

    ids, states = mk.constant(np.array([[1]], np.int32)), mk.zeros((1, 5))
    drawn = []
    for _ in range(6):  # the state and the drawn id go back in, as the tutorial's loop does
        next_id, states = generate_one_step(ids, states)
        ids = mk.reshape(mk.cast(next_id, "int32"), (1, 1))
        drawn.append(int(next_id.numpy()[0]))
    assert generate_one_step.experimental_get_tracing_count() == 1
    assert generate_one_step.program_count == 1
    assert states.shape == (1, 5) and all(0 <= i < 7 for i in drawn)

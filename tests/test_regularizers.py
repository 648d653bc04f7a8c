"""mk.regularizers: Keras 3's formulas, names and errors; layer.losses; the penalties in fit."""
import os

import numpy as np
import pytest
from conftest import assert_close, rand

import minikeras as mk
from minikeras.saving.keras_config import to_keras

R = mk.regularizers
L = mk.layers
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras")


def test_formulas_match_numpy():
    x = rand(3, 4, seed=1)
    assert_close(R.L1(0.3)(x), 0.3 * np.abs(x).sum())
    assert_close(R.L2(0.2)(x), 0.2 * np.square(x).sum())  # no 1/2 (Keras 3; tf.nn.l2_loss has one)
    assert_close(R.L1L2(0.1, 0.2)(x), 0.1 * np.abs(x).sum() + 0.2 * np.square(x).sum())
    assert float(R.L1L2()(x)) == 0.0
    assert float(R.L2()(np.ones((5, 5), np.float32))) == pytest.approx(0.25)  # default 0.01


@pytest.mark.parametrize("mode", ["rows", "columns"])
def test_orthogonal_regularizer_matches_numpy(mode):
    x = rand(3, 4, seed=2)
    u = x if mode == "rows" else x.T
    u = u / np.linalg.norm(u, axis=1, keepdims=True)
    products = np.abs(u @ u.T)[~np.eye(len(u), dtype=bool)]
    expected = 0.1 * 0.5 * products.sum() / (len(u) * (len(u) - 1) / 2)
    assert_close(R.OrthogonalRegularizer(0.1, mode)(x), expected)
    with pytest.raises(ValueError, match="must have rank 2"):
        R.OrthogonalRegularizer()(np.ones(3, np.float32))


def test_penalties_are_differentiable_to_second_order():
    x = mk.Variable(rand(2, 3, seed=3))
    with mk.GradientTape() as outer:
        with mk.GradientTape() as inner:
            loss = R.L1L2(0.1, 0.2)(x)
        g = inner.gradient(loss, x)
        gsum = mk.reduce_sum(g * g)
    assert_close(g, 0.1 * np.sign(x.numpy()) + 0.4 * x.numpy())
    assert_close(outer.gradient(gsum, x), 2 * (0.1 * np.sign(x.numpy()) + 0.4 * x.numpy()) * 0.4)


def test_names_get_serialize_and_errors():
    assert isinstance(R.get("l1"), R.L1) and R.get("l1").l1 == 0.01
    assert isinstance(R.get("L2"), R.L2) and R.get("l2").l2 == 0.01
    assert isinstance(R.get("l1l2"), R.L1L2)
    assert isinstance(R.get("orthogonal_regularizer"), R.OrthogonalRegularizer)
    assert R.l1_l2 is R.L1L2 and R.l1 is R.L1 and R.l2 is R.L2
    assert R.get(None) is None
    fn = lambda w: mk.reduce_sum(w)  # noqa: E731
    assert R.get(fn) is fn
    config = R.serialize(R.L2(0.1))
    assert config == {"module": "minikeras.regularizers", "class_name": "L2", "config": {"l2": 0.1},
                      "registered_name": None}
    # the module convention of every minikeras serialize; a .keras file says what Keras 3 writes
    assert mk.initializers.serialize(mk.initializers.Zeros())["module"] == "minikeras.initializers"
    assert to_keras(config) == {"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.1},
                                "registered_name": None}
    assert R.deserialize(config).l2 == 0.1 and R.get(config).l2 == 0.1
    assert R.deserialize(R.serialize(R.L1L2(0.1, 0.2))).get_config() == {"l1": 0.1, "l2": 0.2}
    # Keras 3 knows 'l1l2', not 'l1_l2', as a string
    for bad in ("l1_l2", "foo"):
        with pytest.raises(ValueError, match=f"Could not interpret regularizer identifier: {bad}"):
            R.get(bad)
    with pytest.raises(ValueError, match="Could not interpret regularizer identifier: 3"):
        R.get(3)
    with pytest.raises(ValueError, match="Invalid value for argument l2: expected a non-negative float"):
        R.L2(-1)
    with pytest.raises(ValueError, match="Received: mode=diagonal"):
        R.OrthogonalRegularizer(mode="diagonal")
    with pytest.raises(ValueError, match="Could not interpret regularizer identifier: foo"):
        L.Dense(2, kernel_regularizer="foo")


def test_layer_losses_follow_keras():
    """Keras's docstring example: kernel L1 0.25, activity L2 / batch size 5.0, in that order
    (activity losses first, then the weights' penalties)."""
    layer = L.Dense(5, kernel_initializer="ones", kernel_regularizer=R.L1(0.01), activity_regularizer=R.L2(0.01))
    layer(np.ones((5, 5), np.float32) * 2.0)
    assert [round(float(v), 5) for v in layer.losses] == [5.0, 0.25]
    # weight penalties are recomputed on each access, from the current values
    layer.kernel.assign(np.full((5, 5), 2.0, np.float32))
    assert [round(float(v), 5) for v in layer.losses] == [5.0, 0.5]
    # each outermost call replaces the activity losses of the last call
    layer(np.zeros((3, 5), np.float32))
    assert [round(float(v), 5) for v in layer.losses] == [0.0, 0.5]
    # frozen weights are not penalised (Keras goes over trainable_weights)
    layer.trainable = False
    assert [round(float(v), 5) for v in layer.losses] == [0.0]


def test_regularizer_arguments_of_the_new_layers():
    x = rand(2, 5, 5, 3, seed=4)
    layer = L.Conv2DTranspose(2, 3, kernel_regularizer="l2", bias_regularizer=R.L1(0.5), bias_initializer="ones")
    layer(x)
    assert_close(sum(float(v) for v in layer.losses), 0.01 * np.square(layer.kernel.numpy()).sum() + 0.5 * 2)
    conv1d = L.Conv1D(2, 2, kernel_regularizer=R.L1(0.1))
    conv1d(x[:, 0])
    assert_close(conv1d.losses[0], 0.1 * np.abs(conv1d.kernel.numpy()).sum())
    conv2d = L.Conv2D(2, 2, kernel_regularizer=R.L1(0.1), activity_regularizer=R.L1(1.0))
    y = conv2d(x)
    assert_close(conv2d.losses[0], np.abs(y.numpy()).sum() / 2)
    emb = L.Embedding(4, 2, embeddings_regularizer=R.L2(1.0))
    emb(np.array([[1, 2]]))
    assert_close(emb.losses[0], np.square(emb.embeddings.numpy()).sum())
    assert emb.get_config()["embeddings_regularizer"]["class_name"] == "L2"
    assert conv2d.get_config()["activity_regularizer"]["class_name"] == "L1"


def test_model_losses_gather_sublayers_and_add_loss():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.a = L.Dense(2, kernel_regularizer=R.L2(1.0), kernel_initializer="ones")
            self.b = L.Dense(1, activity_regularizer=R.L1(1.0), kernel_initializer="ones")

        def call(self, x, training=None):
            self.add_loss(mk.constant(7.0))
            return self.b(self.a(x))

    net = Net()
    net(np.ones((2, 3), np.float32))
    assert sorted(round(float(v), 4) for v in net.losses) == [6.0, 6.0, 7.0]  # |y| = 6 per row; 6 ones
    net(np.ones((2, 3), np.float32))
    assert len(net.losses) == 3  # not accumulated over calls


def _mlp():
    return mk.Sequential([mk.Input((3,)),
                          L.Dense(4, activation="tanh", kernel_regularizer=R.L2(0.01), bias_regularizer=R.L1(0.02),
                                  activity_regularizer=R.L2(0.03)),
                          L.Dense(1, kernel_regularizer=R.L1L2(0.01, 0.02))])


def test_fit_evaluate_and_train_on_batch_report_keras_losses():
    """Same weights and data as Keras 3 (fixture): the same reported losses, penalties included."""
    data = np.load(os.path.join(HERE, "regularized_mlp.npz"))
    model = _mlp()
    model.load_weights(os.path.join(HERE, "regularized_mlp.weights.h5"))
    assert_close([float(v) for v in model.losses], data["losses"], rtol=1e-5, atol=1e-6)
    model(data["x"])
    assert_close([float(v) for v in model.losses], data["losses_after_call"], rtol=1e-5, atol=1e-6)
    model.compile(mk.optimizers.SGD(0.1), "mse")
    assert_close(model.evaluate(data["x"], data["y"], batch_size=8, verbose=0), data["evaluate"], rtol=1e-5)
    tob = [model.train_on_batch(data["x"], data["y"]) for _ in range(2)]
    assert_close(tob, data["train_on_batch"], rtol=1e-5)
    history = model.fit(data["x"], data["y"], batch_size=4, epochs=2, shuffle=False, verbose=0)
    assert_close(history.history["loss"], data["fit"], rtol=1e-5)
    assert_close(np.concatenate([w.numpy().ravel() for w in model.weights]), data["final_weights"], rtol=1e-5,
                 atol=1e-6)
    # model.losses after fit: the weights' penalties (the compiled steps' activity losses are not kept)
    assert len(model.losses) == 3


def test_regularized_embedding_and_conv1d_train_like_keras():
    data = np.load(os.path.join(HERE, "regularized_text.npz"))
    model = mk.Sequential([mk.Input((5,), dtype="int32"), L.Embedding(7, 3, embeddings_regularizer="l2"),
                           L.Conv1D(2, 2, kernel_regularizer="l1", activity_regularizer="l2"),
                           L.GlobalAveragePooling1D(), L.Dense(2, activation="softmax")])
    model.load_weights(os.path.join(HERE, "regularized_text.weights.h5"))
    model.compile(mk.optimizers.Adam(0.01), "sparse_categorical_crossentropy")
    assert_close(model.evaluate(data["x"], data["y"], verbose=0), data["evaluate"], rtol=1e-5)
    assert_close([model.train_on_batch(data["x"], data["y"]) for _ in range(3)], data["train_on_batch"], rtol=1e-5)


def test_losses_in_a_compiled_tape_step():
    """The TF 2 custom-loop idiom: ``loss + sum(model.losses)`` inside ``mk.function``."""
    model = mk.Sequential([mk.Input((3,)), L.Dense(2, kernel_regularizer=R.L2(0.5), activity_regularizer=R.L1(0.1))])
    x = rand(4, 3, seed=7)

    @mk.function
    def step(x):
        with mk.GradientTape() as tape:
            model(x)
            loss = mk.reduce_sum(model.losses[0]) + model.losses[1]
        return loss, tape.gradient(loss, model.trainable_variables)

    loss, (g_kernel, g_bias) = step(x)
    kernel, bias = (w.numpy() for w in model.weights)
    y = x @ kernel + bias
    assert_close(loss, 0.1 * np.abs(y).sum() / 4 + 0.5 * np.square(kernel).sum())
    assert_close(g_kernel, 0.1 * x.T @ np.sign(y) / 4 + kernel)
    assert_close(g_bias, 0.1 * np.sign(y).sum(0) / 4)
    assert len(model.losses) == 1  # the traced activity loss is not kept after the trace


def test_tf2_compiled_loss_adds_the_regularization_losses_it_is_given():
    data = np.load(os.path.join(HERE, "regularized_mlp.npz"))
    model = _mlp()
    model.load_weights(os.path.join(HERE, "regularized_mlp.weights.h5"))
    model.compile(mk.optimizers.SGD(0.1), "mse")
    y_pred = model(data["x"])
    plain = float(model.compiled_loss(data["y"], y_pred))
    assert_close(plain, np.mean(np.square(y_pred.numpy() - data["y"])))
    total = model.compiled_loss(data["y"], y_pred, regularization_losses=model.losses)
    assert_close(total, data["evaluate"], rtol=1e-5)  # what Keras's evaluate reports for these weights
    assert_close(model.compute_loss(data["x"], data["y"], y_pred), data["evaluate"], rtol=1e-5)


def test_summary_and_output_shapes_leave_the_losses_of_the_last_call():
    model = mk.Sequential([mk.Input((3,)), L.Dense(2, activity_regularizer=R.L1(1.0)),
                           L.Lambda(lambda x: x * 2.0, activity_regularizer=R.L2(1.0))])
    model(np.ones((2, 3), np.float32))
    before = [float(v) for v in model.losses]
    model.summary(print_fn=lambda *args, **kwargs: None)
    model.layers[1].compute_output_shape((None, 2))
    assert [float(v) for v in model.losses] == before and len(before) == 2

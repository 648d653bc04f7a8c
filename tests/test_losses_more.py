"""The losses beyond cross-entropy and squared error (hinge, focal, log-cosh, Poisson, cosine,
MSLE, generalized cross-entropy, Dice, Tversky, CTC, Circle) against Keras 3.15 on JAX: per-sample
values, reduced values with and without sample weights, the gradient with respect to y_pred, and
configs. The expected values were made by ``fixtures/keras_losses_more/make_fixtures.py``."""
import json
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_losses_more")
DATA = np.load(os.path.join(HERE, "losses.npz"))
with open(os.path.join(HERE, "configs.json")) as f:
    CONFIGS = json.load(f)

CASES = {  # name: (class, constructor kwargs, function, function kwargs), as make_fixtures.py's CASES
    "msle": ("MeanSquaredLogarithmicError", {}, "mean_squared_logarithmic_error", {}),
    "log_cosh": ("LogCosh", {}, "log_cosh", {}),
    "poisson": ("Poisson", {}, "poisson", {}),
    "cosine": ("CosineSimilarity", {}, "cosine_similarity", {}),
    "cosine_axis0": ("CosineSimilarity", {"axis": 0}, "cosine_similarity", {"axis": 0}),
    "hinge_binary": ("Hinge", {}, "hinge", {}),
    "hinge_signed": ("Hinge", {}, "hinge", {}),
    "squared_hinge": ("SquaredHinge", {}, "squared_hinge", {}),
    "categorical_hinge": ("CategoricalHinge", {}, "categorical_hinge", {}),
    "binary_focal": ("BinaryFocalCrossentropy", {}, "binary_focal_crossentropy", {}),
    "binary_focal_balanced": ("BinaryFocalCrossentropy",
                              {"apply_class_balancing": True, "alpha": 0.3, "gamma": 1.5, "label_smoothing": 0.1},
                              "binary_focal_crossentropy",
                              {"apply_class_balancing": True, "alpha": 0.3, "gamma": 1.5, "label_smoothing": 0.1}),
    "binary_focal_logits": ("BinaryFocalCrossentropy", {"from_logits": True}, "binary_focal_crossentropy",
                            {"from_logits": True}),
    "categorical_focal": ("CategoricalFocalCrossentropy", {}, "categorical_focal_crossentropy", {}),
    "categorical_focal_logits": ("CategoricalFocalCrossentropy", {"from_logits": True, "label_smoothing": 0.2},
                                 "categorical_focal_crossentropy", {"from_logits": True, "label_smoothing": 0.2}),
    "gce": ("CategoricalGeneralizedCrossEntropy", {"q": 0.7}, "categorical_generalized_cross_entropy", {"q": 0.7}),
    "dice": ("Dice", {}, "dice", {}),
    "dice_axis": ("Dice", {"axis": (1, 2, 3)}, "dice", {"axis": (1, 2, 3)}),
    "tversky": ("Tversky", {"alpha": 0.3, "beta": 0.7}, "tversky", {"alpha": 0.3, "beta": 0.7}),
    "ctc": ("CTC", {}, "ctc", {}),
    "circle": ("Circle", {}, "circle", {}),
    "circle_margin": ("Circle", {"gamma": 10.0, "margin": 0.25}, "circle", {"gamma": 10.0, "margin": 0.25}),
}


def _close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_matches_keras(name):
    cls, kwargs, fn, fn_kwargs = CASES[name]
    y_true, y_pred = DATA[f"{name}/y_true"], DATA[f"{name}/y_pred"]
    loss = getattr(keras.losses, cls)(**kwargs)
    _close(getattr(keras.losses, fn)(y_true, y_pred, **fn_kwargs), DATA[f"{name}/per_sample"])
    _close(loss(y_true, y_pred), DATA[f"{name}/reduced"])
    if f"{name}/weighted" in DATA:
        weights = np.linspace(0.5, 1.5, y_pred.shape[0]).astype("float32")
        _close(loss(y_true, y_pred, sample_weight=weights), DATA[f"{name}/weighted"])
    p = mk.Variable(y_pred)
    with mk.GradientTape() as tape:
        value = loss(y_true, p)
    _close(tape.gradient(value, p), DATA[f"{name}/grad"])
    config = json.loads(json.dumps(loss.get_config(), default=list))
    assert config == CONFIGS[name]
    again = mk.losses.deserialize(mk.losses.serialize(loss))
    assert type(again) is type(loss) and again.get_config() == loss.get_config()


def test_losses_by_name_and_in_compile():
    for name in ("hinge", "squared_hinge", "categorical_hinge", "msle", "MSLE", "log_cosh", "poisson", "dice",
                 "tversky", "ctc", "circle", "binary_focal_crossentropy", "categorical_focal_crossentropy"):
        assert callable(mk.losses.get(name))
    assert isinstance(mk.losses.get("Hinge"), mk.losses.Hinge)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="hinge")
    history = model.fit(np.ones((8, 3), "float32"), np.ones((8, 1), "float32"), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_bad_input_names_the_loss():
    with pytest.raises(ValueError, match="q must be in the interval"):
        mk.losses.CategoricalGeneralizedCrossEntropy(q=1.5)
    with pytest.raises(ValueError, match=r"y_true.shape=\(2,\)"):
        mk.losses.ctc(np.ones((2,)), np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="`axis` must be of type `int`"):
        mk.losses.categorical_focal_crossentropy(np.ones((2, 3)), np.ones((2, 3)), axis=True)

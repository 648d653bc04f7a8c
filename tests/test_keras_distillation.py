"""``keras.distillation`` (Distiller, LogitsDistillation, FeatureDistillation, DistillationLoss)
against Keras 3.15: the losses' values and configs, and two epochs of ``Distiller.fit`` from the
same weights (``tests/fixtures/keras_distillation/distiller.json``, by ``make_fixtures.py`` there):
logged losses, the student's weights after, the teacher left alone; then Keras's errors."""
import json
import os

import numpy as np
import pytest

from minikeras import keras

D = keras.distillation
with open(os.path.join(os.path.dirname(__file__), "fixtures", "keras_distillation", "distiller.json")) as _f:
    FIXTURE = json.load(_f)
TEACHER = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], "float32")
STUDENT = np.array([[0.0, 1.0, 0.0], [1.0, 1.0, 1.0]], "float32")


def mlp(prefix, weights):
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(6, activation="relu", name=f"{prefix}_hidden")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(3, name=f"{prefix}_out")(hidden), name=f"{prefix}_model")
    model.set_weights([np.asarray(w, "float32") for w in weights])
    return model


def test_loss_values_and_configs_as_keras():
    # Keras 3.15.1's values for the same logits
    np.testing.assert_allclose(float(D.LogitsDistillation().compute_loss(TEACHER, STUDENT)), 10.966630935668945,
                               rtol=1e-5)
    np.testing.assert_allclose(float(D.FeatureDistillation().compute_loss(TEACHER, STUDENT)), 2.7083334922790527,
                               rtol=1e-5)
    kl = D.LogitsDistillation(2.0, keras.losses.KLDivergence())
    np.testing.assert_allclose(float(kl.compute_loss(TEACHER, STUDENT)), 0.5697421431541443, rtol=1e-5)
    np.testing.assert_allclose(float(D.LogitsDistillation(2.0, "mse").compute_loss(TEACHER, STUDENT)),
                               0.6770833730697632, rtol=1e-5)
    np.testing.assert_allclose(float(D.LogitsDistillation(2.0, ["mse", None]).compute_loss([TEACHER, TEACHER],
                                                                                          [STUDENT, STUDENT])),
                               0.6770833730697632, rtol=1e-5)
    assert D.LogitsDistillation().get_config() == {"temperature": 3.0, "loss": {
        "module": "builtins", "class_name": "function", "config": "kl_divergence", "registered_name": "function"}}
    again = D.LogitsDistillation.from_config(kl.get_config())
    assert isinstance(again.loss, keras.losses.KLDivergence)
    assert float(again.compute_loss(TEACHER, STUDENT)) == float(kl.compute_loss(TEACHER, STUDENT))
    feature = D.FeatureDistillation("mse", "t_hidden", "s_hidden")
    assert D.FeatureDistillation.from_config(feature.get_config()).get_config() == feature.get_config()


@pytest.mark.parametrize("case", sorted(FIXTURE))
def test_fit_matches_keras(case):
    recorded = FIXTURE[case]
    teacher, student = mlp("t", recorded["teacher_weights"]), mlp("s", recorded["student_weights"])
    configs = recorded["losses_config"]
    losses = [(D.FeatureDistillation if "teacher_layer_name" in c else D.LogitsDistillation).from_config(c)
              for c in configs]
    weights = {"logits_kl_and_features": [1.0, 0.5]}.get(case)
    student_weight = {"logits_kl_and_features": 0.3, "default_logits": 0.5}.get(case, 0.0)
    distiller = D.Distiller(teacher, student, losses if len(losses) > 1 else losses[0],
                            distillation_loss_weights=weights, student_loss_weight=student_weight)
    distiller.compile(optimizer=keras.optimizers.SGD(0.1),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = np.asarray(recorded["x"], "float32"), np.asarray(recorded["y"])
    history = distiller.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history
    assert set(history) == set(recorded["history"])
    for key, values in recorded["history"].items():
        np.testing.assert_allclose(history[key], values, rtol=2e-5, atol=1e-6, err_msg=key)
    for got, expected in zip(student.get_weights(), recorded["student_after"]):
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-6)
    for got, expected in zip(teacher.get_weights(), recorded["teacher_weights"]):
        np.testing.assert_array_equal(got, np.asarray(expected, "float32"))
    np.testing.assert_allclose(distiller.predict(x[:2], verbose=0), recorded["predict"], rtol=2e-5, atol=1e-6)


def test_errors_as_keras():
    weights = FIXTURE["default_logits"]
    teacher, student = mlp("t", weights["teacher_weights"]), mlp("s", weights["student_weights"])
    with pytest.raises(ValueError, match="temperature must be positive."):
        D.LogitsDistillation(temperature=0)
    with pytest.raises(ValueError, match="temperature must be a number, got <class 'str'>"):
        D.LogitsDistillation(temperature="a")
    with pytest.raises(ValueError, match="At least one loss must be non-`None`."):
        D.LogitsDistillation(loss=None)
    with pytest.raises(ValueError, match="The `loss` argument in `FeatureDistillation` must contain at least one"):
        D.FeatureDistillation(loss=None)
    with pytest.raises(ValueError, match="student_loss_weight must be between 0.0 and 1.0, got 1.5"):
        D.Distiller(teacher, student, D.LogitsDistillation(), student_loss_weight=1.5)
    with pytest.raises(ValueError, match=r"Number of distillation_loss_weights \(1\) must match number of "
                                         r"distillation_losses \(2\)"):
        D.Distiller(teacher, student, [D.LogitsDistillation(), D.FeatureDistillation()], [1.0])
    with pytest.raises(ValueError, match="'distillation_losses' cannot be `None`."):
        D.Distiller(teacher, student, None)
    with pytest.raises(ValueError, match="Teacher must be a keras.Model"):
        D.Distiller(3, student, D.LogitsDistillation())
    with pytest.raises(ValueError, match="In student model: "):
        D.Distiller(teacher, student, D.FeatureDistillation(teacher_layer_name="t_hidden", student_layer_name="nope"))
    inputs = keras.Input((4,))
    wide = keras.Model(inputs, keras.layers.Dense(5)(inputs))
    with pytest.raises(ValueError, match=r"Teacher and student output shapes are incompatible. Teacher: \(None, 3\), "
                                         r"Student: \(None, 5\). All dimensions must match."):
        D.Distiller(teacher, wide, D.LogitsDistillation())
    distiller = D.Distiller(teacher, student, D.LogitsDistillation())
    with pytest.raises(ValueError, match="'loss' cannot be `None`."):
        distiller.compile(optimizer="sgd")


def test_loads_keras_file_and_saves_one_keras_reads(tmp_path):
    # distiller.keras: the first case's distiller after Keras's fit; Keras warns, as minikeras does, that a custom
    # compile() is not called on load
    recorded = FIXTURE["logits_kl_and_features"]
    with pytest.warns(UserWarning, match="`compile\\(\\)` was not called as part of model loading"):
        distiller = keras.saving.load_model(os.path.join(os.path.dirname(__file__), "fixtures", "keras_distillation",
                                                         "distiller.keras"))
    assert isinstance(distiller, D.Distiller)
    assert [type(loss) for loss in distiller.distillation_losses] == [D.LogitsDistillation, D.FeatureDistillation]
    assert distiller.distillation_loss_weights == [1.0, 0.5] and distiller.student_loss_weight == 0.3
    assert isinstance(distiller.distillation_losses[0].loss, keras.losses.KLDivergence)
    x = np.asarray(recorded["x"], "float32")
    np.testing.assert_allclose(distiller.predict(x[:2], verbose=0), recorded["predict"], rtol=2e-5, atol=1e-6)
    for got, expected in zip(distiller.student.get_weights(), recorded["student_after"]):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    path = str(tmp_path / "again.keras")
    distiller.save(path)  # loaded by Keras 3.15 too (checked by hand: the same predictions)
    again = keras.saving.load_model(path)  # not compiled since loading: no compile config to warn about
    np.testing.assert_allclose(again.predict(x[:2], verbose=0), recorded["predict"], rtol=2e-5, atol=1e-6)

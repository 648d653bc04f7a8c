"""mk.metrics against real Keras 3 on the same inputs, accumulated over uneven batches (8, 8, 5):
values after each batch and the state Variables' names, shapes and order
(tests/fixtures/metrics/, made by make_metric_fixtures.py); the imbalanced-data tutorial's
metrics in fit and evaluate with a last batch smaller than the others."""
import os
import sys
import warnings

import numpy as np
import pytest

import minikeras as mk

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "metrics")
sys.path.insert(0, FIXTURES)
import metric_cases  # noqa: E402

EXPECTED = np.load(os.path.join(FIXTURES, "keras_metrics.npz"))


def _run(case, update):
    metric = getattr(mk.metrics, case[1])(**case[2])
    results = []
    for y_true, y_pred, weight in metric_cases.batches(case):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MeanIoU warns about float weights, as Keras does
            update(metric, y_true, y_pred, weight)
        results.append(np.asarray(metric.result()))
    return metric, np.stack(results)


def _eager(metric, y_true, y_pred, weight):
    metric.update_state(y_true, y_pred, sample_weight=weight)


@pytest.mark.parametrize("case", metric_cases.CASES, ids=[c[0] for c in metric_cases.CASES])
def test_matches_keras_over_uneven_batches(case):
    metric, results = _run(case, _eager)
    np.testing.assert_allclose(results, EXPECTED[case[0]], rtol=2e-5, atol=2e-6)
    # the state: Keras's names (after the metric's own name), shapes and order
    keras_vars = [v.split("/", 1)[1] for v in EXPECTED[case[0] + "__vars"]]
    assert [f"{v.name}:{tuple(v.shape)}" for v in metric.variables] == keras_vars
    assert all(v.path == f"{metric.name}/{v.name}" for v in metric.variables)


_COMPILED_CASES = [c for c in metric_cases.CASES if c[0] in (
    "accuracy_1d", "precision_top_k", "auc_pr_weighted", "auc_multi_label", "f1_score_weighted", "mean_iou",
    "r2_score_weighted")]


@pytest.mark.parametrize("case", _COMPILED_CASES, ids=[c[0] for c in _COMPILED_CASES])
def test_updates_inside_mk_function_match_keras(case):
    @mk.function
    def step(metric, y_true, y_pred, weight):
        if weight is None:
            metric.update_state(y_true, y_pred)
        else:
            metric.update_state(y_true, y_pred, sample_weight=weight)
        return metric.result()

    def compiled(metric, y_true, y_pred, weight):
        step(metric, mk.constant(y_true), mk.constant(y_pred), None if weight is None else mk.constant(weight))

    metric, results = _run(case, compiled)
    np.testing.assert_allclose(results, EXPECTED[case[0]], rtol=2e-5, atol=2e-6)
    metric.reset_state()
    assert all(not np.any(v.numpy()) for v in metric.variables)


def test_accuracy_counts_examples_not_batches():
    m = mk.metrics.Accuracy()
    m.update_state([0, 1, 2, 2], [0, 1, 1, 2])
    m.update_state([1, 1], [0, 0])
    assert float(m.result()) == 0.5  # 3 of 6, as Keras; a mean of the batches' means is 0.375


def _tutorial_model():
    x, y, kernel, bias = metric_cases.tutorial_data()
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1, activation="sigmoid")])
    model.set_weights([kernel, bias])
    metrics = [getattr(mk.metrics, cls)(**kwargs) for cls, kwargs in metric_cases.TUTORIAL_METRICS]
    model.compile(optimizer=mk.optimizers.SGD(learning_rate=0.0), loss="binary_crossentropy", metrics=metrics)
    return model, x, y


def test_tutorial_metrics_in_fit_and_evaluate_with_a_smaller_last_batch():
    model, x, y = _tutorial_model()
    history = model.fit(x, y, batch_size=8, epochs=1, validation_data=(x[:11], y[:11]),
                        class_weight=metric_cases.CLASS_WEIGHT, verbose=0).history
    evaluated = model.evaluate(x, y, batch_size=8, return_dict=True, verbose=0)
    fit_keys = sorted(k.split("/", 1)[1] for k in EXPECTED.files if k.startswith("tutorial_fit/"))
    assert sorted(history) == fit_keys
    for key in fit_keys:
        np.testing.assert_allclose(history[key][0], EXPECTED[f"tutorial_fit/{key}"], rtol=1e-5, atol=1e-6,
                                   err_msg=key)
    for key, value in evaluated.items():
        np.testing.assert_allclose(value, EXPECTED[f"tutorial_evaluate/{key}"], rtol=1e-5, atol=1e-6, err_msg=key)
    assert sorted(evaluated) == sorted(k.split("/", 1)[1] for k in EXPECTED.files if k.startswith("tutorial_evaluate/"))


def test_metrics_by_name_in_compile():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1, activation="sigmoid")])
    model.compile("sgd", "binary_crossentropy", metrics=["auc", "precision", "recall", "true_positives"])
    x, y, _, _ = metric_cases.tutorial_data()
    logs = model.evaluate(x, y, batch_size=8, return_dict=True, verbose=0)
    assert sorted(logs) == ["auc", "loss", "precision", "recall", "true_positives"]
    assert isinstance(model.metrics[1].metrics[0] if hasattr(model.metrics[1], "metrics") else model.metrics[1],
                      mk.metrics.Metric)


def test_config_round_trip():
    for cls, kwargs in [("AUC", {"curve": "PR", "thresholds": [0.2, 0.6], "from_logits": True}),
                        ("Precision", {"thresholds": [0.3, 0.6], "top_k": 2, "class_id": 1}),
                        ("PrecisionAtRecall", {"recall": 0.4, "num_thresholds": 9}),
                        ("FBetaScore", {"beta": 2.0, "average": "macro"}), ("F1Score", {"threshold": 0.4}),
                        ("MeanIoU", {"num_classes": 3, "ignore_class": 0}), ("R2Score", {"num_regressors": 2})]:
        metric = getattr(mk.metrics, cls)(**kwargs)
        config = metric.get_config()
        again = type(metric).from_config(config)
        assert again.get_config() == config


@pytest.mark.parametrize("make, message", [
    (lambda: mk.metrics.Precision(thresholds=[0.5, 1.5]), r"Threshold values must be in \[0, 1\]"),
    (lambda: mk.metrics.AUC(curve="XY"), "Invalid AUC curve value"),
    (lambda: mk.metrics.AUC(summation_method="left"), "Invalid AUC summation method"),
    (lambda: mk.metrics.AUC(num_thresholds=1), "must be an integer > 1"),
    (lambda: mk.metrics.AUC(num_labels=3), "needed only when `multi_label` is True"),
    (lambda: mk.metrics.PrecisionAtRecall(recall=1.5), r"`recall` must be in the range \[0, 1\]"),
    (lambda: mk.metrics.FBetaScore(beta=2), "It should be a Python float"),
    (lambda: mk.metrics.F1Score(average="mean"), "Invalid `average` argument value"),
    (lambda: mk.metrics.R2Score(class_aggregation="sum"), "Invalid value for argument `class_aggregation`"),
    (lambda: mk.metrics.IoU(num_classes=2, target_class_ids=[3]), "Target class id 3 is out of range"),
])
def test_bad_arguments_are_refused_as_keras_does(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_shapes_name_the_metric():
    with pytest.raises(ValueError, match=r"F1Score expects 2D inputs"):
        mk.metrics.F1Score().update_state([1, 0], [0.3, 0.6])
    with pytest.raises(ValueError, match="class_id is provided, y_pred must be a 2D array"):
        mk.metrics.Recall(class_id=1).update_state([1, 0], [0.3, 0.6])

"""The text-classification example's script in a short run: it learns, and its export model
(the vectorizer inside) scores raw strings as the model scores vectorized ones. Both new
examples' notebooks (this one and regression_normalization) run in quick mode in
tests/test_examples.py with the others."""
import importlib.util
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_text_classification_exports_a_model_taking_raw_strings(tmp_path, capsys):
    history, accuracy, export_accuracy, scores = load_example("text_classification").main(
        ["--reviews", "60", "--epochs", "3", "--folder", str(tmp_path)])
    assert (tmp_path / "train" / "pos").is_dir() and len(list((tmp_path / "test" / "neg").iterdir())) == 60
    assert history["loss"][-1] < history["loss"][0]
    assert abs(export_accuracy - accuracy) < 1e-6  # the same model, on raw strings
    assert scores.shape == (3,) and np.all((scores > 0) & (scores < 1))
    assert "Label 0 corresponds to neg" in capsys.readouterr().out

"""The pretrained-model examples run in quick mode and give sane results:
``examples/transfer_learning.py`` (MobileNetV2 fine-tuned on a synthetic image folder) and
``examples/segmentation.py`` (the U-Net on a MobileNetV2 encoder, synthetic shapes and masks).
Their notebooks run with the others in ``test_examples.py``."""
import importlib.util
import socket
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_transfer_learning_trains_the_head_then_the_top_layers(capsys):
    pytest.importorskip("PIL")
    results = load_example("transfer_learning").main(["--quick"])
    assert results["weights"] is None
    assert 0.0 <= results["head_accuracy"] <= 1.0 and 0.0 <= results["fine_tuned_accuracy"] <= 1.0
    assert len(results["history"]["loss"]) == 1 and len(results["history_fine"]["loss"]) == 1
    assert np.isfinite(results["history"]["loss"] + results["history_fine"]["loss"]).all()
    out = capsys.readouterr().out
    assert "wrote 90 PNG files" in out and "MobileNetV2 (alpha 0.35) with random weights: 154 layers" in out
    assert "random weights: BatchNormalization statistics set from one batch of training images" in out
    assert "head: 2 trainable variables" in out
    assert "fine-tuning layers 100..153 of the base: 56 trainable variables" in out
    assert "after training the head: test accuracy" in out and "after fine-tuning: test accuracy" in out


def test_transfer_learning_goes_on_with_random_weights_when_offline(monkeypatch, minikeras_home):
    with socket.socket() as s:  # a port nobody listens on: what an offline machine sees
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("MINIKERAS_WEIGHTS_MIRROR", f"http://127.0.0.1:{port}/")
    lines = []
    with pytest.warns(UserWarning, match=r"Weights for input shape \(224, 224\) will be loaded"):  # Keras's, at 32x32
        model, weights = load_example("transfer_learning").base_model_with("auto", (32, 32, 3), 0.35, log=lines.append)
    assert weights is None and len(model.layers) == 154
    assert lines[0].startswith("No ImageNet weights (URL fetch failure on http://127.0.0.1:"), lines
    assert "continuing with weights=None" in lines[0]


def test_segmentation_masks_and_the_unet(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    segmentation = load_example("segmentation")
    images, masks = segmentation.make_shapes(8, 32, seed=0)
    assert images.shape == (8, 32, 32, 3) and masks.shape == (8, 32, 32, 1)
    assert set(np.unique(masks)) == {segmentation.SHAPE, segmentation.BACKGROUND, segmentation.OUTLINE}
    for mask in masks[..., 0]:  # the outline separates the shape from the background
        shape = mask == segmentation.SHAPE
        neighbours = np.pad(mask, 1, constant_values=segmentation.BACKGROUND)
        for dy, dx in ((0, 1), (1, 0), (1, 2), (2, 1)):
            assert not np.any(shape & (neighbours[dy:dy + 32, dx:dx + 32] == segmentation.BACKGROUND))
    results = segmentation.main(["--quick", "--figure", str(tmp_path / "masks.png")])
    model = results["model"]
    assert model.output_shape == (None, 32, 32, 3)
    # the encoder's outputs, as Keras 3.15.1 gives them for MobileNetV2(alpha=0.35) at 32x32
    assert [tuple(o.shape) for o in model.layers[1].outputs] == [(None, 16, 16, 48), (None, 8, 8, 48),
                                                                 (None, 4, 4, 96), (None, 2, 2, 192), (None, 1, 1, 112)]
    assert model.layers[1].trainable is False and not model.layers[1].trainable_weights
    # the random encoder's statistics were set from the images: its top features keep their scale
    top = np.asarray(model.layers[1](images)[-1])
    assert 0.1 < top.std() < 10, top.std()
    assert results["predicted"].shape == (64, 32, 32, 1) and set(np.unique(results["predicted"])) <= {0, 1, 2}
    assert 0.0 <= results["mean_iou"] <= 1.0 and np.isfinite(results["history"]["loss"]).all()
    assert (tmp_path / "masks.png").stat().st_size > 0
    assert "test pixel accuracy" in capsys.readouterr().out

"""The examples run and give sane results: each script's ``main`` with quick arguments, and
every notebook executed in a python3 kernel with ``MINIKERAS_QUICK=1``.

The MNIST ones read the real files from ``MINIKERAS_DATASETS`` and skip when it is unset.
To keep this file fast, the MNIST scripts see a shortened test set (the first 1,000 images)
through a patched ``mk.datasets.mnist.load_data``; everything else runs as a user runs it.
"""
import importlib.util
import itertools
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import minikeras as mk

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NOTEBOOKS = sorted(path.name for path in EXAMPLES.glob("*.ipynb"))
MNIST_NOTEBOOKS = {"mnist_mlp.ipynb", "mnist_cnn.ipynb", "fgsm.ipynb", "dcgan.ipynb",
                   "image_augmentation.ipynb", "vision_transformer.ipynb"}  # the last two read Fashion-MNIST
TOUR = "gradient_tape_tour.ipynb"

needs_mnist = pytest.mark.skipif(not os.environ.get("MINIKERAS_DATASETS"),
                                 reason="MINIKERAS_DATASETS is unset: the MNIST examples need the real files")


def load_example(name):
    """Imports ``examples/<name>.py`` as a fresh module (its globals are new Variables)."""
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the scripts -------------------------------------------------------------------------
def test_linear_regression_finds_the_line(capsys):
    a, b = load_example("linear_regression").main(["--steps", "20000", "--eager-steps", "2"])
    assert abs(a - 10.0) < 0.2 and abs(b - 5.0) < 0.2, (a, b)
    out = capsys.readouterr().out
    assert "eager:" in out and "compiled: 20000 steps" in out and "y ≈ " in out


def test_polynomial_regression_finds_the_coefficients(capsys):
    example = load_example("polynomial_regression")
    coefficients, losses = example.main(["--epochs", "1000"])
    x, y = example.make_data()
    np.testing.assert_allclose(coefficients, np.polyfit(x, y, 2), atol=2e-3)  # least squares
    np.testing.assert_allclose(coefficients, example.TRUE_COEFFICIENTS, atol=0.1)
    assert len(losses) == 1000 and losses[-1] < 0.05 * losses[0]
    assert "fitted: y ≈ " in capsys.readouterr().out


def test_functional_api_two_inputs_two_outputs_learn(capsys):
    history, results = load_example("functional_api").main(["--epochs", "3", "--samples", "1024"])
    assert {"priority_loss", "department_loss", "val_priority_accuracy", "val_department_accuracy"} <= set(history)
    np.testing.assert_allclose(results["loss"], results["priority_loss"] + 0.5 * results["department_loss"], rtol=1e-4)
    assert results["priority_accuracy"] > 0.6 and results["department_accuracy"] > 0.5, results  # chance: 0.5, 0.25
    out = capsys.readouterr().out
    assert "Connected to" in out and "test: " in out


@pytest.fixture(scope="module")
def mnist_with_short_test_set():
    """MNIST loaded once, its test set cut to 1,000 images."""
    (x_train, y_train), (x_test, y_test) = mk.datasets.mnist.load_data()
    return (x_train, y_train), (x_test[:1000], y_test[:1000])


@pytest.fixture
def short_mnist(monkeypatch, mnist_with_short_test_set):
    monkeypatch.setattr(mk.datasets.mnist, "load_data", lambda *args, **kwargs: mnist_with_short_test_set)


def test_time_series_lstm_forecasts(capsys):
    results = load_example("time_series").main(["--hours", "17532", "--epochs", "1", "--stride", "12"])
    for name in ("single step", "multi step"):
        assert 0 < results[name]["baseline"] < 1 and 0 < results[name]["lstm"] < 1, results
    assert "multi step: test MAE" in capsys.readouterr().out


def test_text_generation_trains_and_generates_with_its_state(capsys):
    history, sample = load_example("text_generation").main(
        ["--chars", "6000", "--epochs", "2", "--units", "32", "--seq-length", "50", "--generate", "30"])
    assert history["loss"][-1] < history["loss"][0] and sample.startswith("Python ") and len(sample) == 37
    assert "characters in" in capsys.readouterr().out


@needs_mnist
def test_mnist_mlp_learns(short_mnist, capsys):
    # the clipped step: the notebook runs the plain one
    accuracy = load_example("mnist_mlp").main(["--epochs", "1", "--subset", "1024", "--clip-norm", "1.0"])
    assert accuracy > 0.5, accuracy  # chance is 0.1
    assert "epoch 1: loss" in capsys.readouterr().out


@needs_mnist
@pytest.mark.parametrize("mode", ["tape", "fit"])
def test_mnist_cnn_learns_under_mixed_bfloat16(mode, short_mnist, capsys):
    curve = load_example("mnist_cnn").main(["--mode", mode, "--epochs", "1", "--subset", "512", "--batch-size", "64",
                                            "--no-compilation-cache", "--policy", "mixed_bfloat16"])
    assert curve[-1][2] > 0.3, curve  # chance is 0.1
    out = capsys.readouterr().out
    assert "Dtype policy mixed_bfloat16: bfloat16, float32 compute, float32 weights" in out, out[:400]
    model = load_example("mnist_cnn").build_model("mixed_bfloat16")
    assert [layer.compute_dtype for layer in model.layers[-2:]] == ["bfloat16", "float32"]


@needs_mnist
@pytest.mark.parametrize("mode", ["tape", "fit"])
def test_mnist_cnn_learns(mode, short_mnist, capsys):
    before = mk.config.compilation_cache_directory()  # None, or the test run's (conftest)
    # 1.5 epochs of 8 steps: a whole epoch, then one that stops after 4 steps
    curve = load_example("mnist_cnn").main(["--mode", mode, "--epochs", "1.5", "--subset", "512", "--batch-size", "64",
                                            "--no-compilation-cache"])  # the test process writes no cache
    assert mk.config.compilation_cache_directory() == before
    assert [epochs for epochs, _, _ in curve] == [1, 1.5], curve
    assert curve[-1][2] > 0.3, curve  # chance is 0.1
    out = capsys.readouterr().out
    assert out.startswith("Loading MNIST (the first 512 training examples)\nLoaded 512 training"), out[:200]
    assert "Training 12 steps of 64 examples" in out and "final test accuracy" in out
    if mode == "tape":  # progress inside the epoch: 8 steps, shown every 2
        assert "epoch 1: step 6/8 dispatched" in out, out
        compiled = re.search(r"compiled the training step in ([0-9.]+) s; first step at ([0-9.]+) s", out)
        assert compiled and float(compiled[1]) <= float(compiled[2]), out  # timed from the first call, not the start


def test_mnist_cnn_schedule_warms_up_holds_then_decays():
    cnn = load_example("mnist_cnn")
    schedule = cnn.learning_rate(2814)  # 3 epochs of 938 steps (batch 64)
    assert (schedule.decay_start, schedule.warmup_steps, schedule.peak) == (1876, 100, 2e-3)
    peak = 2e-3
    expected = {0: peak / 10, 50: peak / 10 + 0.9 * peak / 2, 100: peak, 1200: peak, 1876: peak,
                1876 + 938 / 2: peak / 2, 2814: 0.0, 4000: 0.0}
    steps = np.array(list(expected), np.float32)
    np.testing.assert_allclose(schedule(mk.constant(steps)).numpy(), list(expected.values()), atol=1e-9, rtol=1e-6)
    # inside a compiled step, from the optimizer's iterations Variable
    step = mk.Variable(0, dtype="int32")
    at = mk.function(lambda: schedule(step))
    for value in (25, 1200):
        step.assign(value)
        assert float(at()) == pytest.approx(float(schedule(value)))
    with pytest.raises(ValueError, match=r"WarmupStableDecay: expected 0 <= warmup_steps <= decay_start < total, "
                                         r"received warmup_steps=50, decay_start=40, total=60"):
        cnn.WarmupStableDecay(60, 40, warmup_steps=50)
    assert cnn.learning_rate(1).decay_start == 0  # the shortest run still has a schedule


# -- the tutorials' exercises, FGSM and the DCGAN ----------------------------------------
def test_tape_exercises_agree_with_their_references(capsys):
    results = load_example("tape_exercises").main(["--quick"])
    both = results["tape_vs_fit"]
    np.testing.assert_allclose(both["tape"], both["fit"], rtol=1e-5)  # same model, seed and batches
    assert both["tape_accuracy"] == both["fit_accuracy"] > 0.8
    ours, reference = results["hessian"]
    np.testing.assert_allclose(ours, reference, rtol=1e-5, atol=1e-5)
    hessian, hessian_reference, eigenvalues = results["last_layer"]
    np.testing.assert_allclose(hessian, hessian_reference, rtol=1e-4, atol=1e-6)
    assert eigenvalues[0] > -1e-6 * eigenvalues[-1]  # convex in the last layer
    worst, losses = results["momentum"]  # asserted step for step inside
    assert worst < 1e-5 and losses[-1] < losses[0]
    accuracy, accuracy_loaded, difference = results["custom_layer"]
    assert accuracy == accuracy_loaded > 0.8 and difference == 0.0
    assert "4. RBF layer" in capsys.readouterr().out


@pytest.fixture(scope="module")
def cnn_weights(tmp_path_factory, mnist_with_short_test_set):
    """The CNN trained once (on 1,024 images), its weights shared by the FGSM and DCGAN tests."""
    path = str(tmp_path_factory.mktemp("cnn") / "mnist_cnn.weights.h5")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mk.datasets.mnist, "load_data", lambda *args, **kwargs: mnist_with_short_test_set)
        load_example("cnn_classifier").classifier(path, epochs=1, subset=1024, log=lambda *args: None)
    return path


@needs_mnist
def test_fgsm_lowers_accuracy_as_eps_grows(short_mnist, cnn_weights, tmp_path, capsys):
    accuracies = load_example("fgsm").main(["--weights", cnn_weights, "--test-subset", "500",
                                            "--figures", str(tmp_path)])
    values = list(accuracies.values())
    assert list(accuracies) == [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
    assert values[0] > 0.5 and values[-1] < values[0] - 0.2, accuracies
    assert all(b <= a + 0.01 for a, b in itertools.pairwise(values)), accuracies
    assert (tmp_path / "fgsm_grid.png").stat().st_size > 0
    assert "CNN weights loaded" in capsys.readouterr().out


@needs_mnist
def test_dcgan_trains_and_is_judged(short_mnist, cnn_weights, monkeypatch, capsys):
    monkeypatch.setenv("MINIKERAS_QUICK", "1")
    history, share, classes = load_example("dcgan").main(["--cnn-weights", cnn_weights, "--width", "8"])
    assert len(history) == 1 and all(np.isfinite(history[0][1:3]))
    assert 0.0 <= share <= 1.0 and 0 <= classes <= 10
    assert "sample quality:" in capsys.readouterr().out


@needs_mnist
def test_image_augmentation_trains_from_a_png_folder(capsys):
    pytest.importorskip("PIL")
    results = load_example("image_augmentation").main(["--train", "512", "--test", "300", "--epochs", "1"])
    assert results[False] > 0.15 and 0.0 <= results[True] <= 1.0, results  # chance is 0.1
    out = capsys.readouterr().out
    assert "wrote 812 PNG files" in out and "with augmentation" in out


def test_transformer_learns_to_reverse_in_quick_mode(tmp_path, capsys):
    results = load_example("transformer").main(["--quick", "--figure", str(tmp_path / "attention.png")])
    losses = results["history"]["loss"]
    assert losses[-1] < 0.9 * losses[0], losses
    assert results["token_accuracy"] > 0.25, results["token_accuracy"]  # chance: 1/11 per token
    scores = results["scores"]  # (heads, target, source): each row a distribution over the tokens
    source = results["test"][0][0]
    np.testing.assert_allclose(scores.sum(-1), 1.0, rtol=1e-5)
    assert np.all(scores[:, :, source == 0] == 0)  # padding gets no attention
    assert (tmp_path / "attention.png").stat().st_size > 0
    assert "masked token accuracy on 1000 test sequences" in capsys.readouterr().out


# -- the notebooks -----------------------------------------------------------------------
MAX_IMAGE_BYTES = 200_000  # PNG bytes per committed notebook


def test_notebooks_are_committed_executed():
    """Valid nbformat 4 for the python3 kernel, committed with the outputs of a run (so a
    visitor sees the plots): every code cell executed, no errors, text and PNG only, small.

    To refresh one: ``jupyter nbconvert --to notebook --execute --inplace examples/NAME.ipynb``
    (with ``MINIKERAS_DATASETS`` set for the MNIST ones).
    """
    nbformat = pytest.importorskip("nbformat")
    assert set(NOTEBOOKS) >= {"linear_regression.ipynb", "polynomial_regression.ipynb", "mnist_mlp.ipynb",
                              "mnist_cnn.ipynb", "functional_api.ipynb", TOUR, "tape_exercises.ipynb", "fgsm.ipynb",
                              "dcgan.ipynb"}
    for name in NOTEBOOKS:
        nb = nbformat.read(EXAMPLES / name, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata.kernelspec.name == "python3", name
        assert 'os.environ.get("MINIKERAS_QUICK") == "1"' in nb.cells[1].source, f"{name}: no quick switch on top"
        code = [cell for cell in nb.cells if cell.cell_type == "code"]
        assert all(cell.execution_count for cell in code), f"{name}: commit it executed, every cell"
        outputs = [output for cell in code for output in cell.outputs]
        assert outputs, f"{name}: commit it executed, with its outputs"
        image_bytes = 0
        for output in outputs:
            assert output.output_type != "error", f"{name} is committed with an error output"
            data = output.get("data", {})
            assert set(data) <= {"text/plain", "image/png"}, f"{name}: only text and PNG outputs, found {set(data)}"
            image_bytes += len(data.get("image/png", "")) * 3 // 4  # base64
        assert image_bytes <= MAX_IMAGE_BYTES, f"{name}: {image_bytes} bytes of images, at most {MAX_IMAGE_BYTES}"


@pytest.fixture(scope="module")
def kernel_env():
    """The environment for notebook kernels, after checking that 'python3' is this interpreter."""
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PREFER_ENV_PATH", "1")  # this environment's kernelspec before a user-wide one
        try:
            argv = KernelSpecManager().get_kernel_spec("python3").argv
        except NoSuchKernel:
            pytest.fail("no 'python3' kernelspec: install ipykernel in this environment")
        bare = ("python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info[:2]))
        if argv[0] not in bare and Path(argv[0]) != Path(sys.executable):  # a bare one runs sys.executable
            pytest.fail(f"the 'python3' kernelspec runs {argv[0]}, not this interpreter {sys.executable}")
        env = dict(os.environ, MINIKERAS_QUICK="1", MPLBACKEND="Agg")
        yield env


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, kernel_env):
    import nbformat
    from nbclient import NotebookClient

    if name in MNIST_NOTEBOOKS and not os.environ.get("MINIKERAS_DATASETS"):
        pytest.skip("MINIKERAS_DATASETS is unset: the MNIST notebooks need the real files")
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    check = "import sys, minikeras\nprint(sys.executable, minikeras.__file__, sep='\\n')"
    nb.cells.append(nbformat.v4.new_code_cell(check))
    client = NotebookClient(nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(EXAMPLES)}})
    client.execute(env=kernel_env)  # raises CellExecutionError, with the cell and traceback, on any error
    executable, package = nb.cells[-1].outputs[0]["text"].splitlines()
    assert Path(executable) == Path(sys.executable), f"the kernel ran {executable}, not {sys.executable}"
    assert Path(package) == Path(mk.__file__), f"the kernel imported {package}, not {mk.__file__}"


@pytest.mark.parametrize("args, message", [
    (["--batch-size", "0"], "argument --batch-size: expected an integer > 0, received '0'"),
    (["--subset", "0"], "argument --subset: expected an integer > 0, received '0'"),
    (["--subset", "-10"], "argument --subset: expected an integer > 0, received '-10'"),
    (["--epochs", "0"], "argument --epochs: expected a number > 0"),
])
def test_mnist_cnn_validates_its_arguments(args, message, capsys):
    with pytest.raises(SystemExit) as info:
        load_example("mnist_cnn").main(args)
    assert info.value.code == 2 and message in capsys.readouterr().err

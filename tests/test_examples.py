"""The examples run and give sane results: each script's ``main`` with quick arguments, and
every notebook executed in a python3 kernel with ``MINIKERAS_QUICK=1``.

The MNIST ones read the real files from ``MINIKERAS_DATASETS`` and skip when it is unset.
To keep this file fast, the MNIST scripts see a shortened test set (the first 1,000 images)
through a patched ``mk.datasets.mnist.load_data``; everything else runs as a user runs it.
"""
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import minikeras as mk

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NOTEBOOKS = sorted(path.name for path in EXAMPLES.glob("*.ipynb"))
MNIST_NOTEBOOKS = {"mnist_mlp.ipynb", "mnist_cnn.ipynb"}
TOUR = "gradient_tape_tour.ipynb"  # committed with its (text) outputs

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


@needs_mnist
def test_mnist_mlp_learns(short_mnist, capsys):
    # the clipped step: the notebook runs the plain one
    accuracy = load_example("mnist_mlp").main(["--epochs", "1", "--subset", "1024", "--clip-norm", "1.0"])
    assert accuracy > 0.5, accuracy  # chance is 0.1
    assert "epoch 1: loss" in capsys.readouterr().out


@needs_mnist
@pytest.mark.parametrize("mode", ["tape", "fit"])
def test_mnist_cnn_learns(mode, short_mnist, capsys):
    # 1.5 epochs of 8 steps: a whole epoch, then one that stops after 4 steps
    curve = load_example("mnist_cnn").main(["--mode", mode, "--epochs", "1.5", "--subset", "512", "--batch-size", "64"])
    assert [epochs for epochs, _, _ in curve] == [1, 1.5], curve
    assert curve[-1][2] > 0.3, curve  # chance is 0.1
    out = capsys.readouterr().out
    assert out.startswith("Loading MNIST (the first 512 training examples)\nLoaded 512 training"), out[:200]
    assert "Training 12 steps of 64 examples" in out and "final test accuracy" in out
    if mode == "tape":  # progress inside the epoch: 8 steps, shown every 2
        assert "compiled the training step" in out and "epoch 1: step 6/8 dispatched" in out, out


# -- the notebooks -----------------------------------------------------------------------
def test_notebooks_are_committed_clean():
    """Valid nbformat 4 for the python3 kernel; no outputs, except the tour's small text ones.

    To clear a notebook's outputs: Jupyter's "Restart Kernel and Clear All Outputs", then save.
    """
    nbformat = pytest.importorskip("nbformat")
    assert set(NOTEBOOKS) >= {"linear_regression.ipynb", "polynomial_regression.ipynb", "mnist_mlp.ipynb",
                              "mnist_cnn.ipynb", "functional_api.ipynb", TOUR}
    for name in NOTEBOOKS:
        nb = nbformat.read(EXAMPLES / name, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata.kernelspec.name == "python3", name
        assert 'os.environ.get("MINIKERAS_QUICK") == "1"' in nb.cells[1].source, f"{name}: no quick switch on top"
        code = [cell for cell in nb.cells if cell.cell_type == "code"]
        outputs = [output for cell in code for output in cell.outputs]
        if name != TOUR:
            assert not outputs, f"{name} is committed with outputs: clear them"
            continue
        assert all(cell.outputs for cell in code[1:]), f"{name}: commit the tour executed, with its outputs"
        for output in outputs:
            assert output.output_type != "error", f"{name} is committed with an error output"
            assert set(output.get("data", {})) <= {"text/plain"}, f"{name}: only text outputs are committed"
        assert len(json.dumps(outputs)) < 20_000, f"{name}: committed outputs are too large"


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

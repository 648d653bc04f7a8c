"""Every Python block in README.md runs as shown, as a new user would paste it, and again as a TF 2
program would spell it: ``import minikeras as tf`` with ``tf.keras.*`` written out.

Each block runs on its own (a fresh namespace, its own imports) in an empty working folder;
the block that loads MNIST needs the real files (``MINIKERAS_DATASETS``) and skips without them.
"""
import contextlib
import io
import os
import re
import runpy
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 5


KERAS_NAMES = ("layers", "optimizers", "losses", "metrics", "callbacks", "datasets", "saving", "Sequential", "Model",
               "Input")


def as_tensorflow_program(source):
    """The block as a TF 2 program ported by one import: ``mk.layers.X`` -> ``tf.keras.layers.X``,
    ``mk.X`` -> ``tf.X``."""
    source = source.replace("import minikeras as mk", "import minikeras as tf")
    source = re.sub(r"\bmk\.(%s)\b" % "|".join(KERAS_NAMES), r"tf.keras.\1", source)
    return re.sub(r"\bmk\.", "tf.", source)


def test_a_block_as_tensorflow_spells_it():
    assert as_tensorflow_program("import minikeras as mk\nmk.layers.Dense(2); mk.constant(1.0); mk.Sequential()") == (
        "import minikeras as tf\ntf.keras.layers.Dense(2); tf.constant(1.0); tf.keras.Sequential()")


@pytest.mark.parametrize("spelling", ["mk", "tf"])
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs_as_shown(index, spelling, tmp_path, monkeypatch):
    source = BLOCKS[index] if spelling == "mk" else as_tensorflow_program(BLOCKS[index])
    if "datasets.mnist" in source and not os.environ.get("MINIKERAS_DATASETS"):
        pytest.skip("MINIKERAS_DATASETS is unset: this block loads the real MNIST files")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    script = tmp_path / f"readme_block_{index}.py"  # a file, so that mk.function can read the source
    script.write_text(source, encoding="utf-8")
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(script), run_name="__main__")
    if "unconnected_gradients=\"raise\"" in source:  # the printed diagnosis is the one shown
        assert "passes through `round`, which has no gradient" in out.getvalue()
        assert "it was never watched by this tape" in out.getvalue()

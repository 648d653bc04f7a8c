"""mk.utils.plot_model / model_to_dot: a Sequential's chain and a functional model's graph, and the
clear ImportError without pydot or Graphviz (skipped parts say which is missing)."""
import shutil

import pytest

import minikeras as mk
from minikeras.utils import plot

needs_pydot = pytest.mark.skipif(plot.pydot is None, reason="pydot is not installed (pip install pydot)")


def _functional():
    a, b = mk.Input((3,), name="a"), mk.Input((2,), name="b")
    merged = mk.layers.Concatenate(name="merge")([mk.layers.Dense(4, name="da")(a), b])
    return mk.Model([a, b], mk.layers.Dense(1, activation="sigmoid", name="out")(merged))


def _edges(dot):
    names = {n.get_name(): n.get("label").strip('"').split(" ")[0] for n in dot.get_nodes() if n.get("label")}
    return sorted((names[e.get_source()], names[e.get_destination()]) for e in dot.get_edges())


@needs_pydot
def test_model_to_dot_edges_and_labels():
    seq = mk.Sequential([mk.Input((4,)), mk.layers.Dense(3, name="d1"), mk.layers.Dense(2, name="d2")])
    dot = mk.utils.model_to_dot(seq, show_shapes=True)
    assert _edges(dot) == [("d1", "d2")]
    assert "Output shape: (None, 2)" in dot.to_string()
    fn = mk.utils.model_to_dot(_functional(), show_shapes=True, show_layer_activations=True)
    assert _edges(fn) == [("a", "da"), ("b", "merge"), ("da", "merge"), ("merge", "out")]
    assert "Activation: sigmoid" in fn.to_string()


@needs_pydot
@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_plot_model_writes_the_file(tmp_path):
    path = tmp_path / "model.png"
    assert mk.utils.plot_model(_functional(), to_file=str(path), show_shapes=True) is None
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_clear_error_without_pydot(monkeypatch):
    monkeypatch.setattr(plot, "pydot", None)
    with pytest.raises(ImportError, match=r"You must install pydot \(`pip install pydot`\)"):
        mk.utils.plot_model(_functional())


@needs_pydot
def test_clear_error_without_graphviz(monkeypatch):
    model = _functional()
    monkeypatch.setenv("PATH", "")  # no dot program to be found
    with pytest.raises(ImportError, match="You must install graphviz"):
        mk.utils.plot_model(model, to_file="unused.png")

"""Benchmarks time another framework in a process of its own: ``import minikeras`` changes the
process's malloc setting, which slows TensorFlow (the simple CNN ran at 5,535 samples/s in
minikeras's process against 7,700 in its own). Checked on the sources, without running them."""
import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _imported(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_train_step_keeps_tensorflow_and_pytorch_out_of_its_process():
    assert not _imported(BENCHMARKS / "train_step.py") & {"tensorflow", "tf_reference", "torch"}
    for child in ("train_step_tf.py", "train_step_torch.py"):
        source = (BENCHMARKS / child).read_text(encoding="utf-8")
        assert not _imported(BENCHMARKS / child) & {"minikeras", "jax"}, child
        assert child in (BENCHMARKS / "train_step.py").read_text(encoding="utf-8") and "serve(" in source
    for module in ("tf_reference.py", "worker_protocol.py", "resnet_step_tf.py", "resnet20_model.py",
                   "keras_io_models.py"):  # what the other frameworks' workers import
        assert not _imported(BENCHMARKS / module) & {"minikeras", "jax"}, module

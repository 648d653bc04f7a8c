"""keras.Operation and keras.Function against Keras 3.15: calls on values and on symbolic
tensors, graph nodes in functional models, automatic names and configs, and Keras's errors.
The expected values are the written formulas (Keras 3.15 on TensorFlow gives the same)."""
import os
import subprocess

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras
from minikeras.keras import ops


class ScaleShift(keras.Operation):
    def __init__(self, factor=2.0, name=None):
        super().__init__(name=name)
        self.factor = factor

    def call(self, x):
        return ops.multiply(x, self.factor) + 1


class FirstColumn(keras.Operation):
    def call(self, x):
        return x[:, :1]

    def compute_output_spec(self, x):
        return keras.KerasTensor((x.shape[0], 1), dtype=x.dtype)


X = np.arange(6, dtype="float32").reshape(2, 3)


def test_operation_calls_call_on_values():
    op = ScaleShift(3.0)
    np.testing.assert_allclose(np.asarray(op(X)), X * 3 + 1)


def test_operation_on_symbolic_tensors_records_a_node_a_model_replays():
    op = ScaleShift(3.0)
    x = keras.Input((3,))
    y = op(x)
    assert isinstance(y, keras.KerasTensor) and y.shape == (None, 3) and y.dtype == "float32"
    assert y._keras_history[0].operation is op
    assert op.input is x and op.output is y
    model = keras.Model(x, y)
    assert op in model.operations and op not in model.layers  # Keras lists an Operation with the ops only
    np.testing.assert_allclose(model.predict(X, verbose=0), X * 3 + 1)


def test_operation_with_its_own_output_spec():
    y = FirstColumn()(keras.Input((3,)))
    assert y.shape == (None, 1)
    np.testing.assert_allclose(np.asarray(keras.Model(y.node.input_tensors[0], y)(X)), X[:, :1])


def test_operation_names_and_config():
    keras.backend.clear_session()
    assert [ScaleShift().name, ScaleShift().name, keras.Operation().name] == ["scale_shift", "scale_shift_1",
                                                                                "operation"]
    op = ScaleShift(3.0, name="triple")
    assert op.get_config() == {"name": "triple", "factor": 3.0}
    again = ScaleShift.from_config(op.get_config())
    assert (again.name, again.factor) == ("triple", 3.0)
    assert FirstColumn(name="first").get_config() == {"name": "first"}


def test_operation_config_needs_plain_arguments():
    class Holds(keras.Operation):
        def __init__(self, table):
            super().__init__()
            self.table = table

    with pytest.raises(NotImplementedError, match="Please implement `get_config\\(\\)`"):
        Holds(np.ones(3)).get_config()
    assert Holds([1, 2]).get_config() == {"table": [1, 2]}  # no `name` argument: none in the config, as Keras


def test_operation_errors():
    with pytest.raises(ValueError, match="cannot contain character `/`. Received: name=a/b"):
        keras.Operation(name="a/b")
    with pytest.raises(ValueError, match="must be a string"):
        keras.Operation(name=3)
    with pytest.raises(NotImplementedError, match="has no call"):
        keras.Operation()(X)

    class Bad(keras.Operation):
        def call(self, x):
            return ops.reshape(x, (7,))

    with pytest.raises(Exception, match="Could not automatically infer the output shape / dtype of 'bad'"):
        Bad(name="bad")(keras.Input((3,)))
    with pytest.raises(AttributeError, match="never been called"):
        ScaleShift().output


A = keras.Input((3,), name="a")
B = keras.Input((3,), name="b")
H = keras.layers.Dense(2, kernel_initializer="ones", name="dense_in_function")(A) + B[:, :2]
F = keras.Function([A, B], H, name="f")


def test_function_runs_the_graph_on_values():
    assert isinstance(F, keras.Operation)
    assert F.name == "f" and F.inputs == [A, B] and F.outputs == [H]
    assert [op.name for op in F.operations][:3] == ["a", "b", "dense_in_function"]
    ones = np.ones((1, 3), "float32")
    np.testing.assert_allclose(np.asarray(F([ones, ones])), [[4.0, 4.0]])  # 3 (Dense of ones) + 1


def test_function_on_symbolic_tensors_is_one_node():
    y = F([keras.Input((3,)), keras.Input((3,))])
    assert isinstance(y, keras.KerasTensor) and y.shape == (None, 2)
    assert y.node.operation is F


def test_function_dict_structures():
    f = keras.Function({"a": A, "b": B}, {"o": H})
    out = f({"b": np.zeros((1, 3), "float32"), "a": np.ones((1, 3), "float32")})
    assert list(out) == ["o"]
    np.testing.assert_allclose(np.asarray(out["o"]), [[3.0, 3.0]])


def test_function_errors():
    with pytest.raises(ValueError, match="invalid input structure"):
        F([np.ones((1, 3))])
    with pytest.raises(ValueError, match=r"For input 'a', expected shape \(None, 3\), but received instead a tensor "
                                         r"with shape \(1, 4\)"):
        F([np.ones((1, 4)), np.ones((1, 4))])
    with pytest.raises(ValueError, match="not connected"):
        keras.Function([A], H)


@keras.saving.register_keras_serializable(package="operation_test", name="ScaleShift")
class RegisteredScaleShift(ScaleShift):
    """Saved as Keras writes it: ``registered_name`` "operation_test>ScaleShift"."""

    def get_config(self):
        return {"factor": self.factor, "name": self.name}


FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_operation", "scale_shift.keras")


def expected_twice(x):
    return ((x * 3 + 1) + 1) * 3 + 1


def test_a_model_with_a_custom_operation_called_twice_saves_and_loads(tmp_path):
    x = keras.Input((3,))
    op = RegisteredScaleShift(3.0, name="scale_shift")
    model = keras.Model(x, op(ops.add(op(x), 1.0)))
    entry = [e for e in model.get_config()["layers"] if e["name"] == "scale_shift"][0]
    assert entry["registered_name"] == "operation_test>ScaleShift"
    assert entry["config"] == {"factor": 3.0, "name": "scale_shift"}
    assert len(entry["inbound_nodes"]) == 2
    model.save(tmp_path / "op.keras")
    loaded = keras.saving.load_model(tmp_path / "op.keras")
    np.testing.assert_allclose(loaded(X).numpy(), expected_twice(X), rtol=1e-6)


def test_keras_file_with_a_custom_operation_loads():
    model = keras.saving.load_model(FIXTURE)
    np.testing.assert_allclose(model(X).numpy(), expected_twice(X), rtol=1e-6)
    assert [op.name for op in model.operations if isinstance(op, RegisteredScaleShift)] == ["scale_shift"]


KERAS_LOADS_OURS = """
import sys, numpy as np, keras
sys.path.insert(0, sys.argv[2])
from make_fixtures import ScaleShift
model = keras.saving.load_model(sys.argv[1])
print(repr(np.asarray(model(np.arange(6, dtype="float32").reshape(2, 3))).tolist()))
"""


@pytest.mark.skipif(not os.environ.get("MINIKERAS_KERAS_PYTHON"), reason="MINIKERAS_KERAS_PYTHON is unset")
def test_keras_loads_our_file_with_a_custom_operation(tmp_path):
    model = keras.saving.load_model(FIXTURE)
    model.save(tmp_path / "ours.keras")
    result = subprocess.run([os.environ["MINIKERAS_KERAS_PYTHON"], "-c", KERAS_LOADS_OURS, str(tmp_path / "ours.keras"),
                             os.path.dirname(FIXTURE)], check=True, capture_output=True, text=True,
                            env={**os.environ, "KERAS_BACKEND": "jax"})
    np.testing.assert_allclose(np.array(eval(result.stdout.strip().splitlines()[-1])), expected_twice(X), rtol=1e-6)


def test_a_model_with_a_tf_style_op_says_it_cannot_be_saved():
    x = keras.Input((3,))
    model = keras.Model(x, mk.nn.relu(x))
    with pytest.raises(ValueError, match="applies the op 'relu'.*wrap it in a layer"):
        model.get_config()

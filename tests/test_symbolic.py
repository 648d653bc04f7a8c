"""Symbolic tensors: shapes by abstract tracing (unknown sizes found with two probes), and the
errors a KerasTensor gives where a value is needed."""
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.symbolic import KerasTensor, Node, SymbolicInput, any_symbolic, flatten, output_spec


def test_output_spec_keeps_known_sizes_and_finds_unknown_ones():
    x = KerasTensor((None, 3, None), "float32")
    out = output_spec(lambda v: jnp.sum(v, axis=2)[:, :, None] * jnp.ones((1, 1, 4)), (x,), {}, "test")
    assert out.shape == (None, 3, 4) and out.dtype == np.float32
    pair = output_spec(lambda v, scale=1.0: (v * scale, v.shape[0] * jnp.ones((2,))), (x,), {"scale": 2.0}, "test")
    assert pair[0].shape == (None, 3, None) and pair[1].shape == (2,)


def test_a_shape_that_depends_on_an_unknown_size_is_an_error():
    x = KerasTensor((None, 3), "float32")
    with pytest.raises(ValueError, match="depends on an unknown input size"):
        output_spec(lambda v: jnp.zeros((5,)) if v.shape[0] == 83 else jnp.zeros((5, 5)), (x,), {}, "op 'odd'")


def test_nodes_link_outputs_back():
    x = KerasTensor((None, 2), "float32")
    y = KerasTensor((None, 2), "float32")
    node = Node("operation", ([x],), {"other": y}, y, index=0)
    assert node.input_tensors == [x, y] and node.output_tensors == [y] and y.node is node
    assert any_symbolic({"a": [1, x]}) and not any_symbolic([1.0, np.ones(2)])
    assert flatten({"b": y, "a": x}) == [x, y]  # dicts in sorted key order


def test_values_are_refused_with_a_pointer_to_the_functional_api():
    x = mk.Input((3,))
    with pytest.raises(SymbolicInput, match="symbolic tensor.*mk.Model"):
        mk.constant(x)
    with pytest.raises(TypeError, match="no truth value"):
        bool(x)
    with pytest.raises(TypeError, match="first dimension is unknown"):
        len(x)

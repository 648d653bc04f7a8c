"""mk.einsum: forward values and first/second-order gradients against jnp.einsum for
explicit, implicit, diagonal ('ii'), summed-away and broadcast ('...') equations; TF's errors."""
import jax.numpy as jnp
import pytest
from conftest import check_grad, rand

import minikeras as mk

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),              # implicit output 'ik'
    ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]),
    ("i,i", [(3,), (3,)]),                    # dot product
    ("i,j->ij", [(3,), (2,)]),                # outer product
    ("ij->", [(2, 3)]),                       # sum away every label
    ("ij->j", [(2, 3)]),
    ("ii", [(3, 3)]),                         # trace
    ("ii->i", [(3, 3)]),                      # diagonal
    ("iji->j", [(2, 3, 2)]),
    ("ij,ik,il->jkl", [(2, 3), (2, 2), (2, 4)]),
    ("...ij,jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(2, 1, 2, 3), (4, 3, 2)]),  # broadcast batch axes
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),  # attention scores
]


@pytest.mark.parametrize("equation, shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_against_jax(equation, shapes):
    inputs = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    check_grad(lambda *xs: mk.einsum(equation, *xs), lambda *xs: jnp.einsum(equation, *xs), *inputs)


def test_einsum_values_match_tf():
    assert float(mk.einsum("ii", mk.eye(3))) == 3.0  # TF 2.21
    assert mk.einsum("ij,jk", mk.ones((2, 3)), mk.ones((3, 4))).shape == (2, 4)


def test_einsum_errors():
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"label 'j' has size 3 in one operand and 2.*Einsum"):
        mk.einsum("ij,jk->ik", mk.ones((2, 3)), mk.ones((2, 4)))
    with pytest.raises(mk.errors.InvalidArgumentError, match="names 2 operands, received 1"):
        mk.einsum("ij,jk->ik", mk.ones((2, 3)))
    with pytest.raises(mk.errors.InvalidArgumentError, match="does not fit an operand of rank 3"):
        mk.einsum("ij->i", mk.ones((2, 3, 4)))
    with pytest.raises(TypeError, match="share a dtype"):
        mk.einsum("i,i", mk.ones(2), mk.ones(2, dtype=mk.int32))


ROWS_CONTRACTED = [
    ("abde,abc->cde", [(3, 5, 2, 16), (3, 5, 4)]),  # EinsumDense "abc,cde->abde"'s kernel gradient
    ("abe,abcd->cde", [(3, 5, 16), (3, 5, 2, 4)]),  # the attention output projection's
    ("ab,ac->bc", [(7, 3), (7, 32)]),
]


@pytest.mark.parametrize("equation, shapes", ROWS_CONTRACTED, ids=[c[0] for c in ROWS_CONTRACTED])
def test_products_contracting_leading_axes_run_on_the_native_kernel(monkeypatch, equation, shapes):
    from minikeras.ops import einsum as einsum_module
    from minikeras.xla_cpu import matmul_native, tuning
    monkeypatch.setattr(tuning, "MATMUL_NATIVE_FLOPS", 0)
    inputs = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    if matmul_native.available():
        assert einsum_module._rows_contracted(equation, *[jnp.asarray(x) for x in inputs]) is not None
    check_grad(lambda *xs: mk.einsum(equation, *xs), lambda *xs: jnp.einsum(equation, *xs), *inputs)


def test_products_with_shared_free_axes_keep_xla():
    from minikeras.ops import einsum as einsum_module
    a, b = jnp.ones((64, 32, 48)), jnp.ones((64, 48, 64))
    assert einsum_module._rows_contracted("abc,acd->bd", a, b) is None  # c is contracted but not leading in b
    assert einsum_module._rows_contracted("abc,abd->abcd", a, jnp.ones((64, 32, 16))) is None  # a batch axis


COTANGENT_LAST = [
    ("aecd,abcd->acbe", [(2, 5, 3, 4), (2, 6, 3, 4)]),  # MultiHeadAttention's query-key product
    ("aecd,acbe->abcd", [(2, 5, 3, 4), (2, 3, 6, 5)]),  # its combination, the values first
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ii,ij->j", [(3, 3), (3, 2)]),                     # a diagonal taken before the product
]


@pytest.mark.parametrize("equation, shapes", COTANGENT_LAST, ids=[c[0] for c in COTANGENT_LAST])
def test_einsum_with_the_cotangent_last_has_the_same_values_and_gradients(equation, shapes):
    from minikeras.ops.einsum import einsum_cotangent_last
    inputs = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    check_grad(lambda *xs: einsum_cotangent_last(equation, *xs), lambda *xs: jnp.einsum(equation, *xs), *inputs)

"""LoRA (low-rank adaptation) for Dense, EinsumDense, Embedding and the Conv layers, as Keras 3.15's.

``layer.enable_lora(rank)`` (or ``lora_rank=`` at construction: enabled when the layer is
built) freezes the layer's matrix ``W`` (``kernel``, or ``embeddings``) and adds two trainable
float32 weights ``<W>_a`` of shape ``W.shape[:-1] + (rank,)`` ('he_uniform') and ``<W>_b`` of
shape ``(rank, W.shape[-1])`` ('zeros'), named ``lora_kernel_a``/``lora_kernel_b`` (Embedding:
``lora_embeddings_a``/``lora_embeddings_b``). The layer then computes with
``W + (lora_alpha / lora_rank) * a @ b`` (cast to its compute dtype), which ``layer.kernel``
returns; the frozen matrix stays in ``layer.weights``. The factors take the matrix's regularizer;
a weight constraint on the matrix is refused.

Weights files hold what Keras 3 writes: the merged matrix in the matrix's place (``vars/0``)
and no factors, so a LoRA layer's file loads into a plain layer; loading a file into a LoRA
layer sets the matrix and zeroes both factors (Keras's ``load_own_variables``).
"""
import numpy as np

from minikeras import initializers
from minikeras.ops.linalg import matmul
from minikeras.ops.math import cast


class LoRAWeight:
    """The class attribute ``kernel`` (or ``embeddings``) of a LoRA-capable layer: the Variable
    itself (kept as ``_<name>``) until LoRA is enabled, then the merged matrix as a Tensor."""

    def __init__(self, name):
        self.name = name
        self.stored = f"_{name}"

    def __get__(self, layer, owner=None):
        if layer is None:
            return self
        variable = vars(layer).get(self.stored)
        if not vars(layer).get("lora_enabled"):
            return variable
        return cast(merged(layer, variable), layer.compute_dtype)

    def __set__(self, layer, value):
        vars(layer)[self.stored] = value


def merged(layer, matrix):
    """``matrix + (lora_alpha / lora_rank) * a @ b`` for ``layer``'s LoRA factors."""
    a, b = layer.lora_factors()
    return matrix + (layer.lora_alpha / layer.lora_rank) * matmul(a, b)


class LoRAMixin:
    """``enable_lora`` and what goes with it; the layer class sets ``_lora_matrix`` (the
    LoRAWeight's name) and calls ``_set_lora`` in ``__init__`` and ``_build_lora`` at the end of
    ``build``."""

    _lora_matrix = "kernel"
    _lora_alpha_at_build = True  # Keras's Dense and Embedding enable it at build with alpha = rank

    def _set_lora(self, lora_rank, lora_alpha):
        self.lora_rank = lora_rank
        self.lora_alpha = lora_alpha if lora_alpha is not None else lora_rank
        self.lora_enabled = False

    def _build_lora(self):
        if self.lora_rank and not self.lora_enabled:
            self.enable_lora(self.lora_rank, lora_alpha=self.lora_alpha if self._lora_alpha_at_build else None)

    def _frozen_matrix(self):
        return vars(self)[f"_{self._lora_matrix}"]

    def enable_lora(self, rank, lora_alpha=None, a_initializer="he_uniform", b_initializer="zeros"):
        """Freezes the layer's matrix and adds the trainable factors ``a`` (``a_initializer``) and
        ``b`` (``b_initializer``) of rank ``rank``; the update is scaled by ``lora_alpha / rank``
        (``lora_alpha`` defaults to ``rank``).

        Raises:
          ValueError: the matrix has a constraint, the layer is not built, or LoRA is already
            enabled (as Keras 3).
        """
        matrix = self._lora_matrix
        where = f"{type(self).__name__} '{self.name}'"
        if getattr(self, f"{matrix}_constraint"):
            raise ValueError(f"{where}: Lora is incompatible with {'kernel' if matrix == 'kernel' else 'embedding'} "
                             f"constraints. In order to enable lora on this layer, remove the `{matrix}_constraint` "
                             "argument.")
        if not self.built:
            raise ValueError(f"{where}: Cannot enable lora on a layer that isn't yet built. Build it first "
                             "(layer.build(input_shape), or call it on data).")
        if self.lora_enabled:
            raise ValueError(f"{where}: lora is already enabled. This can only be done once per layer.")
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank <= 0:
            raise ValueError(f"{where}: enable_lora expects a positive integer rank, received rank={rank!r}")
        frozen = self._frozen_matrix()
        regularizer = getattr(self, f"{matrix}_regularizer")
        self._lora_a = self.add_weight(f"lora_{matrix}_a", tuple(frozen.shape[:-1]) + (int(rank),),
                                       initializers.get(a_initializer), dtype="float32", regularizer=regularizer)
        self._lora_b = self.add_weight(f"lora_{matrix}_b", (int(rank), frozen.shape[-1]),
                                       initializers.get(b_initializer), dtype="float32", regularizer=regularizer)
        frozen.trainable = False
        self.lora_enabled = True
        self.lora_rank = int(rank)
        self.lora_alpha = lora_alpha if lora_alpha is not None else int(rank)

    def lora_factors(self):
        """``(a, b)``: the LoRA factor Variables (LoRA must be enabled)."""
        return self._lora_a, self._lora_b

    def keras_file_variables(self):
        """The layer's own variables as Keras 3's weights files hold them: with LoRA enabled the
        merged matrix (``MergedMatrix``) in the matrix's place and no factors; None otherwise (the
        usual order)."""
        if not self.lora_enabled:
            return None
        frozen = self._frozen_matrix()
        skipped = {id(frozen)} | {id(v) for v in self.lora_factors()}
        others = [v for v, _ in self.declared_weights() if id(v) not in skipped]
        return [MergedMatrix(self, frozen)] + others

    def _lora_config(self):
        return {"lora_rank": self.lora_rank, "lora_alpha": self.lora_alpha} if self.lora_rank else {}


class MergedMatrix:
    """A LoRA layer's matrix as its weights file holds it: written merged (in the layer's compute
    dtype, as Keras's ``layer.kernel``); read into the frozen matrix, zeroing the factors."""

    def __init__(self, layer, frozen):
        self.layer, self.frozen = layer, frozen
        self.path, self.name, self.shape = frozen.path, frozen.name, tuple(frozen.shape)

    @property
    def dtype(self):
        return np.dtype(self.layer.compute_dtype)

    def numpy(self):
        return np.asarray(cast(merged(self.layer, self.frozen), self.layer.compute_dtype).numpy())

    def assign(self, value):
        self.frozen.assign(value)
        for factor in self.layer.lora_factors():
            factor.assign(np.zeros(factor.shape, "float32"))  # the factors are float32 in any policy

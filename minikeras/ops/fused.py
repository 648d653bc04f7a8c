"""Several steps of a layer or an optimizer as one op, where a fused or native kernel applies.

Keras-level classes say what they compute (a convolution, a bias and an activation; an Adam step)
and call these ops; the choice of kernel is made here, below them, as every other op makes it:

- ``conv2d_bias_activation``: a ``Conv2D`` layer's output. With a bias and ReLU it is one op
  (``nn_conv.conv2d_bias_relu``: on the native kernels the bias and ReLU are the epilogue of each
  output tile), with the bits of the three ops it replaces.
- ``dense_bias``: a ``Dense`` layer's ``x @ kernel + bias`` as one op (``nn_dense``), whose kernel
  and bias gradients come from one native pass over the output's gradient, or None where it does
  not apply.
- ``fused_adam_step``: one Adam step of one variable on the native kernel (``xla_cpu.adam_native``:
  the jax code's bits, and no XLA kernels to compile), or None where it does not apply.
- ``weight_gradient``: ``a.T @ b`` on jax arrays, the weight gradient of a product over many rows
  (a recurrent layer's kernels over all steps at once), on the native kernel where it applies.
- ``step_matmul``: ``a @ b`` on jax arrays, a loop step's small product by a kernel (a recurrent
  layer's backward step, ``dz @ U.T``), on the native kernel where it applies.
- ``weight_gradient_and_column_sums``: ``(a.T @ b, b.sum(0))`` from one pass over ``b``, where the
  native kernel applies: a weight gradient and its bias's.
- ``lstm_forward_loop``, ``lstm_backward_loop``, ``gru_forward_loop``, ``gru_backward_loop``: an
  LSTM's or a GRU's whole loops over time on native kernels (``rnn_loops``), where
  ``rnn_loops_apply``.
- ``step_slice``: a loop step's slice of a stacked array in a buffer of its own (``xla_cpu.materialize``),
  so that the step's elementwise math does not read it through the loop's slice.
"""
from minikeras.ops import nn_dense, rnn_loops
from minikeras.ops.nn import conv2d
from minikeras.ops.nn_conv import conv2d_bias_relu
from minikeras.tensor import Tensor, to_array
from minikeras.xla_cpu import adam_native, rnn_step_native
from minikeras.xla_cpu.materialize import materialize
from minikeras.xla_cpu.matmul_native import matmul_nn, matmul_tn, matmul_tn_and_column_sums


def _is_relu(activation):
    # mk.activations.relu (with its defaults) is plain ReLU; it is named, not imported, because
    # activations are built from ops and sit above them.
    return getattr(activation, "__module__", None) == "minikeras.activations" and \
        getattr(activation, "__qualname__", None) == "relu"


def conv2d_bias_activation(input, filters, bias, activation, strides, padding, dilations=None):  # noqa: A002
    """``activation(conv2d(input, filters, ...) + bias)`` (NHWC): what a ``Conv2D`` layer computes.

    Args:
      input, filters, strides, padding, dilations: as ``conv2d``.
      bias: None, or one value per output channel.
      activation: a function of a Tensor (``mk.activations.relu`` with a bias runs fused).
    """
    if bias is not None and _is_relu(activation):
        return conv2d_bias_relu(input, filters, bias, strides=strides, padding=padding, dilations=dilations)
    linear = conv2d(input, filters, strides=strides, padding=padding, dilations=dilations)
    return activation(linear + bias if bias is not None else linear)


def dense_bias(x, kernel, bias):
    """``x @ kernel + bias`` for a 2-D ``x``: a ``Dense`` layer's output before its activation, as one
    op whose kernel gradient ``x^T g`` and bias gradient (``g`` summed over its rows) come from one
    pass of the native kernel over ``g`` (``nn_dense.dense_bias``); None where that op does not
    take the operands (``nn_dense.applies``: all float32, 2-D ``x``): the caller then adds the bias
    to ``matmul(x, kernel)``."""
    return nn_dense.dense_bias(x, kernel, bias) if nn_dense.applies(x, kernel, bias) else None


def fused_adam_step(variable, m, v, gradient, alpha, beta_1, beta_2, epsilon, weight_decay=None, learning_rate=None):
    """One Adam step of one variable as one native kernel call, where it applies.

    ``m' = m + (g - m)(1 - beta_1)``, ``v' = v + (g^2 - v)(1 - beta_2)``,
    ``variable' = variable - m' alpha / (sqrt(v') + epsilon)``, the same bits as these ops; with
    ``weight_decay``, the variable first decayed, ``variable - variable * weight_decay *
    learning_rate`` (the optimizers' decoupled weight decay), in the same pass.

    Args:
      variable, m, v: the Variables (or Tensors) of one shape.
      gradient: a Tensor of that shape.
      alpha: the step's bias-corrected learning rate, a scalar Tensor of the variable's dtype.
      beta_1, beta_2, epsilon: the optimizer's hyperparameters.
      weight_decay: None, or a Python number (the kernel does not take another kind).
      learning_rate: the step's learning rate, a scalar Tensor of the variable's dtype (with
        ``weight_decay``).

    Returns:
      ``(variable', m', v')`` as Tensors; None where the kernel does not apply (hyperparameters
      that are not Python numbers, another dtype or backend, a symbolic shape, no native build):
      the caller then runs the step as separate ops.
    """
    numbers = (beta_1, beta_2, epsilon) + (() if weight_decay is None else (weight_decay,))
    if (not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in numbers)
            or not isinstance(gradient, Tensor) or not adam_native.supported(variable.shape, variable.dtype)
            or not adam_native.available()):
        return None
    decay = {} if weight_decay is None else {"weight_decay": float(weight_decay),
                                             "learning_rate": to_array(learning_rate)}
    new_variable, new_m, new_v = adam_native.update(
        to_array(variable), to_array(m), to_array(v), to_array(gradient), to_array(alpha), beta_1, beta_2, epsilon,
        **decay)
    return Tensor(new_variable), Tensor(new_m), Tensor(new_v)


def weight_gradient(a, b):
    """``a.T @ b`` for 2-D jax arrays (a: (rows, m), b: (rows, n)), contracting their rows: a
    weight gradient over many rows. XLA:CPU runs this product well below its GEMM speed, so it
    runs on ``xla_cpu.matmul_native``'s kernel where that applies (differentiable in reverse mode)."""
    return matmul_tn(a, b)


def weight_gradient_and_column_sums(a, b):
    """``(a.T @ b, b.sum(0))`` for 2-D jax arrays contracting their rows: a weight gradient and the
    bias gradient beside it, from one pass of the native kernel over ``b`` where that applies."""
    return matmul_tn_and_column_sums(a, b)


def rnn_loops_apply(kind, p_shape, units, dtype):
    """Whether the native loops of ``kind`` ('lstm' or 'gru') take every step's input projections of
    ``p_shape`` (time, batch, gates x units) (``rnn_loops``)."""
    return rnn_loops.applies(kind, p_shape, units, dtype)


def lstm_forward_loop(p, bias, u, h0, c0, mask):
    """An LSTM's forward loop: ``(hs, cs, gates, tcs)`` (``rnn_loops``); differentiable."""
    return rnn_loops.lstm_forward_loop(p, bias, u, h0, c0, mask)


def lstm_backward_loop(gates, tcs, c_prev, u_t, dhs, dh, dc, mask):
    """An LSTM's reverse loop: ``(dz, dh0, dc0)`` (``rnn_loops``); differentiable."""
    return rnn_loops.lstm_backward_loop(gates, tcs, c_prev, u_t, dhs, dh, dc, mask)


def gru_forward_loop(p, b_in, u, b_rec, h0, mask):
    """A GRU's (``reset_after=True``) forward loop: ``(hs, gates, rhs)`` (``rnn_loops``); differentiable."""
    return rnn_loops.gru_forward_loop(p, b_in, u, b_rec, h0, mask)


def gru_backward_loop(gates, rhs, h_prev, u_t, dhs, dh, mask):
    """A GRU's reverse loop: ``(dp, dq, dh0)`` (``rnn_loops``); differentiable."""
    return rnn_loops.gru_backward_loop(gates, rhs, h_prev, u_t, dhs, dh, mask)


def step_slice(x):
    """``x``, one step's slice of a stacked array inside a loop over time (a jax array), in a
    buffer of its own before the step's elementwise math reads it.

    XLA:CPU fuses a loop's ``dynamic_slice`` of a stacked input into each elementwise fusion
    that reads it, and those fusions then run several times slower than on a buffer of their own
    (a recurrent layer's gate math: benchmarks/LOG.md); ``xla_cpu.materialize`` keeps the slice
    out of them. The values are ``x``'s.
    """
    return materialize(x)


def step_matmul(a, b, *, forward=False):
    """``a @ b`` on jax arrays (``a``: (..., K), ``b``: (K, N)): a step of a loop over time that
    multiplies by a kernel, a recurrent layer's forward step ``h @ U`` (``forward``) or backward step
    ``dz @ U.T`` (``U.T`` made once, before the loop). A 2-D ``a`` runs on
    ``xla_cpu.rnn_step_native``'s two-thread kernel where that applies; else a backward step on
    ``xla_cpu.matmul_native``'s kernel where that applies (1.04-1.5x XLA's dot inside the loop on
    AVX-512), others on XLA's dot. Differentiable in reverse mode."""
    if a.ndim == 2:
        two_threads = rnn_step_native.step_matmul(a, b)
        if two_threads is not None:
            return two_threads
        if not forward:
            return matmul_nn(a, b)
    return a @ b

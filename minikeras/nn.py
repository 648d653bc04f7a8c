"""``mk.nn``: TensorFlow's ``tf.nn`` names (activations, softmax, losses, conv, pooling, dropout)."""
from minikeras.ops.math import log_sigmoid, sigmoid, softplus, tanh  # noqa: F401
from minikeras.ops.nn import (  # noqa: F401
    avg_pool2d, batch_normalization, bias_add, conv2d, conv2d_transpose, dropout, elu, embedding_lookup, gelu,
    l2_loss, l2_normalize, leaky_relu, log_softmax, max_pool2d, moments, relu, relu6, selu,
    sigmoid_cross_entropy_with_logits, silu, softmax, softmax_cross_entropy_with_logits, softsign,
    sparse_softmax_cross_entropy_with_logits, swish)

"""minikeras: the TensorFlow 2 / Keras API on its own reverse-mode tape, over JAX and XLA.

    import minikeras as mk
    x = mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)   # mk.Tensor(6.0, shape=(), dtype=float32)
"""
from minikeras.xla_cpu import host_memory as _host_memory

_host_memory.apply_at_import()  # before jax's threads first allocate; MINIKERAS_REUSE_HOST_MEMORY=0 opts out

from minikeras import ops as _ops  # noqa: F401  (installs operators on Tensor and Variable)
from minikeras import config, dtypes, errors, linalg, math  # noqa: F401
from minikeras import nn  # noqa: F401
from minikeras.dtypes import (  # noqa: F401
    DType, as_dtype, bfloat16, bool, float16, float32, float64, int8, int16, int32, int64, string, uint8, uint16,
    uint32, uint64)
from minikeras.programs.function import function  # noqa: F401
from minikeras import random  # noqa: F401
from minikeras.ops.array import (  # noqa: F401
    broadcast_to, concat, expand_dims, gather, identity, one_hot, pad, reshape, split, squeeze, stack,
    stop_gradient, tile, transpose, unstack)
from minikeras.ops.add_n import add_n  # noqa: F401
from minikeras.ops.clip import clip_by_global_norm, clip_by_norm, clip_by_value, global_norm  # noqa: F401
from minikeras.ops.control import case, cond, custom_gradient, grad_pass_through, switch_case  # noqa: F401
from minikeras.ops.loops import while_loop  # noqa: F401
from minikeras.ops.tensor_array import TensorArray  # noqa: F401
from minikeras.tape.recompute import recompute_grad  # noqa: F401
from minikeras.ops.creation import (  # noqa: F401
    constant, convert_to_tensor, eye, fill, linspace, ones, ones_like, range, zeros, zeros_like)
from minikeras.ops.einsum import einsum  # noqa: F401
from minikeras.ops.linalg import matmul, tensordot  # noqa: F401
from minikeras.ops.math import (  # noqa: F401
    abs, add, cast, cos, divide, equal, exp, greater, less, log, maximum, minimum, multiply, negative,
    not_equal, pow, round, sigmoid, sign, sin, sqrt, square, subtract, tanh, where)
from minikeras.ops.norm import norm  # noqa: F401
from minikeras.ops.reduce import (  # noqa: F401
    argmax, argmin, reduce_all, reduce_any, reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod,
    reduce_sum)
from minikeras.ops.scan_ops import cumsum  # noqa: F401
from minikeras.ops.shape import rank, shape, size  # noqa: F401
from minikeras.ops.sort import argsort, sort  # noqa: F401
from minikeras.tape import GradientTape, UnconnectedGradients  # noqa: F401
from minikeras.tensor import Tensor, Variable  # noqa: F401
from minikeras.ragged import RaggedTensor  # noqa: F401
from minikeras import strings  # noqa: F401
from minikeras.tensor_spec import TensorSpec  # noqa: F401
from minikeras.module import Module  # noqa: F401
from minikeras import (  # noqa: F401,E402
    activations, callbacks, data, datasets, initializers, layers, losses, metrics, models, optimizers, regularizers,
    saving)
from minikeras.models import Model, Sequential  # noqa: F401,E402
# TensorFlow 2's top-level initializer names: the same classes, defaults and call as Keras's.
from minikeras.initializers import (  # noqa: F401,E402
    Constant as constant_initializer, Ones as ones_initializer, RandomNormal as random_normal_initializer,
    RandomUniform as random_uniform_initializer, Zeros as zeros_initializer)
from minikeras import summary  # noqa: F401,E402
from minikeras import train  # noqa: F401,E402
from minikeras import image  # noqa: F401,E402
from minikeras import io  # noqa: F401,E402
from minikeras import utils  # noqa: F401,E402
from minikeras import dtype_policies, mixed_precision  # noqa: F401,E402
from minikeras import applications  # noqa: F401,E402
from minikeras import keras  # noqa: F401,E402
from minikeras.layers import Input  # noqa: F401,E402
from minikeras import distribute  # noqa: F401,E402
from minikeras import autograph  # noqa: F401,E402
from minikeras.device import device  # noqa: F401,E402

newaxis = None  # x[..., mk.newaxis] adds an axis, as tf.newaxis

from minikeras.version import __version__  # noqa: F401,E402

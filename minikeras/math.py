"""``mk.math``: elementwise and reduction math under TensorFlow's names."""
from minikeras.ops.clip import global_norm  # noqa: F401
from minikeras.ops.linalg import matmul, tensordot  # noqa: F401
from minikeras.ops.math import (  # noqa: F401
    abs, acos, add, asin, atan, ceil, cos, cosh, divide, equal, erf, exp, expm1, floor, floordiv, floormod,
    greater, greater_equal, is_finite, is_inf, is_nan, less, less_equal, log, log1p, log_sigmoid, logical_and,
    logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply, negative, not_equal, pow, reciprocal,
    round, rsqrt, sigmoid, sign, sin, sinh, softplus, sqrt, square, squared_difference, subtract, tan, tanh,
    truediv)
from minikeras.ops.norm import norm  # noqa: F401
from minikeras.ops.reduce import (  # noqa: F401
    argmax, argmin, reduce_all, reduce_any, reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod,
    reduce_std, reduce_sum, reduce_variance)
from minikeras.ops.scan_ops import cumprod, cumsum  # noqa: F401
from minikeras.ops.sort import TopKV2, top_k  # noqa: F401

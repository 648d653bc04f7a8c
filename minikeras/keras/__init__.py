"""``mk.keras``: minikeras's Keras surface under TF's spelling, so that ``import minikeras as tf``
runs ``tf.keras.*`` code and ``from minikeras import keras`` runs ``keras.*`` code.

    import minikeras as tf
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    model.compile(optimizer=tf.keras.optimizers.Adam(), loss="mse")

Every name here is minikeras's own object (``tf.keras.layers is mk.layers``); the submodules can
also be imported by name (``from minikeras.keras.layers import Dense``).
"""
import sys

from minikeras import (  # noqa: F401
    activations, applications, callbacks, constraints, datasets, dtype_policies, initializers, layers, losses, metrics,
    mixed_precision, models, optimizers, regularizers, saving, utils, visualization)
from minikeras.dtype_policies import DTypePolicy, FloatDTypePolicy  # noqa: F401
from minikeras.keras import backend  # noqa: F401
from minikeras.keras import (  # noqa: F401
    config, distillation, distribution, legacy, ops, preprocessing, random, tree, wrappers)
from minikeras.device import device  # noqa: F401
from minikeras.initializers import Initializer  # noqa: F401
from minikeras.keras.function import Function  # noqa: F401
from minikeras.keras.name_scope import name_scope  # noqa: F401
from minikeras.keras.stateless_scope import StatelessScope  # noqa: F401
from minikeras.keras.operation import Operation  # noqa: F401
from minikeras.keras.variable import Variable  # noqa: F401
from minikeras.layers import Input, InputSpec, Layer  # noqa: F401
from minikeras.losses import Loss  # noqa: F401
from minikeras.metrics import Metric  # noqa: F401
from minikeras.optimizers import Optimizer  # noqa: F401
from minikeras.regularizers import Regularizer  # noqa: F401
from minikeras.symbolic import KerasTensor  # noqa: F401
from minikeras.saving.model_file import KERAS_VERSION as __version__  # noqa: F401 - the Keras release followed
from minikeras.models import Model, Sequential  # noqa: F401
from minikeras.tape.recompute import recompute_grad as remat  # noqa: F401 - keras.remat: the same contract
from minikeras.layers.remat_scope import RematScope  # noqa: F401

for _name in ("activations", "applications", "callbacks", "constraints", "datasets", "dtype_policies", "initializers",
              "layers", "losses", "metrics", "mixed_precision", "models", "optimizers", "regularizers", "saving",
              "utils", "visualization"):
    # ``import minikeras.keras.layers`` / ``from minikeras.keras.layers import Dense`` find the module itself
    sys.modules.setdefault(f"{__name__}.{_name}", globals()[_name])
for _name in ("densenet", "efficientnet", "imagenet_utils", "inception_v3", "mobilenet", "mobilenet_v2", "mobilenet_v3",
              "resnet", "resnet50", "resnet_v2", "vgg16", "vgg19", "xception"):
    # ``from minikeras.keras.applications.resnet50 import preprocess_input``: Keras's module paths
    sys.modules.setdefault(f"{__name__}.applications.{_name}", getattr(applications, _name))
del _name


def version():
    """The Keras 3 release whose API and files minikeras follows (``keras.version()``)."""
    return __version__

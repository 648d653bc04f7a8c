"""Optimizers under Keras 3's names, defaults and update rules (``mk.optimizers``).

    opt = mk.optimizers.Adam(learning_rate=1e-3)
    opt.apply_gradients(zip(grads, model.trainable_variables))

``get('adamw')`` builds one by name (any case: 'sgd', 'adam', 'adamw', 'adagrad', 'adadelta',
'adamax', 'nadam', 'rmsprop', 'adafactor', 'ftrl', 'lamb', 'lion', 'muon', 'schedulefreeadamw');
``mk.optimizers.schedules``
holds learning-rate schedules (``legacy`` Keras 2's class names, which raise as in Keras 3);
``MultiOptimizer(OptimizerMap(...))`` gives variables different optimizers by path.
"""
from minikeras.optimizers import legacy, schedules  # noqa: F401
from minikeras.optimizers.adadelta import Adadelta
from minikeras.optimizers.adafactor import Adafactor
from minikeras.optimizers.adagrad import Adagrad
from minikeras.optimizers.adam import Adam
from minikeras.optimizers.adamax import Adamax
from minikeras.optimizers.adamw import AdamW
from minikeras.optimizers.base import Optimizer
from minikeras.optimizers.ftrl import Ftrl
from minikeras.optimizers.lamb import Lamb
from minikeras.optimizers.lion import Lion
from minikeras.optimizers.muon import Muon
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer
from minikeras.optimizers.multi_optimizer import MultiOptimizer, OptimizerMap
from minikeras.optimizers.nadam import Nadam
from minikeras.optimizers.rmsprop import RMSprop
from minikeras.optimizers.schedule_free_adamw import ScheduleFreeAdamW
from minikeras.optimizers.sgd import SGD

_CLASSES = (SGD, Adam, AdamW, Adagrad, Adadelta, Adamax, Nadam, RMSprop, Adafactor, Ftrl, Lamb, Lion, Muon,
            ScheduleFreeAdamW)
_BY_NAME = {cls.__name__.lower(): cls for cls in _CLASSES + (LossScaleOptimizer, MultiOptimizer)}


def serialize(optimizer):
    """``{'module', 'class_name', 'config', 'registered_name'}`` for an optimizer."""
    return {"module": "minikeras.optimizers", "class_name": optimizer.__class__.__name__,
            "config": optimizer.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """Builds an optimizer from ``serialize``'s dict (or ``{'class_name': 'adam', 'config': {}}``)."""
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(str(name).lower())
    if cls is None:
        raise ValueError(f"Unknown optimizer: {name!r}. Known optimizers: {', '.join(sorted(_BY_NAME))}")
    return cls.from_config(dict(config.get("config") or {}), custom_objects)


def get(identifier):
    """An optimizer from a name ('adam', 'adamw', 'sgd', ...; any case), a config dict or an
    Optimizer instance (returned as is).

    Raises:
      ValueError: for an unknown name (the message lists the known ones) or another value.
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}})
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r} (expected a name such as 'adam', a "
                     "config dict or an mk.optimizers.Optimizer)")


__all__ = ["Optimizer", "LossScaleOptimizer", "MultiOptimizer", "OptimizerMap", "SGD", "Adam", "AdamW", "Adagrad",
           "Adadelta", "Adamax", "Nadam", "RMSprop", "Adafactor", "Ftrl", "Lamb", "Lion", "Muon",
           "ScheduleFreeAdamW", "schedules", "legacy", "get", "serialize", "deserialize"]

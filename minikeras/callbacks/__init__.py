"""Keras callbacks (``mk.callbacks``): hooks into fit/evaluate/predict, progress display,
early stopping, checkpoints, learning-rate control, logging (also to a server), and evaluating
with the optimizer's moving averages of the weights."""
from minikeras.callbacks.backup_and_restore import BackupAndRestore  # noqa: F401
from minikeras.callbacks.callback import Callback, CallbackList, History, LambdaCallback  # noqa: F401
from minikeras.callbacks.checkpoint import ModelCheckpoint  # noqa: F401
from minikeras.callbacks.csv_logger import CSVLogger  # noqa: F401
from minikeras.callbacks.learning_rate import LearningRateScheduler, ReduceLROnPlateau  # noqa: F401
from minikeras.callbacks.monitor import EarlyStopping, TerminateOnNaN  # noqa: F401
from minikeras.callbacks.progbar import ProgbarLogger  # noqa: F401
from minikeras.callbacks.remote_monitor import RemoteMonitor  # noqa: F401
from minikeras.callbacks.swap_ema_weights import SwapEMAWeights  # noqa: F401
from minikeras.callbacks.tensorboard import TensorBoard  # noqa: F401

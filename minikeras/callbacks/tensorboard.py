"""TensorBoard: fit's logs, weights and profile as TensorBoard event files (Keras 3's callback:
the same directories, tags and steps)."""
import json
import os
import time
import warnings

import jax
import numpy as np

from minikeras import summary
from minikeras.callbacks.callback import Callback
from minikeras.saving.keras_config import to_keras
from minikeras.saving.registry import serialize_keras_object


class TensorBoard(Callback):
    """Writes what fit measures for TensorBoard (``tensorboard --logdir <log_dir>``).

    In ``<log_dir>/train``: ``epoch_<metric>`` (step: the epoch), ``epoch_learning_rate``,
    ``batch_<metric>`` every ``update_freq`` batches (step: the batch count since fit began),
    weight histograms ``<layer>/<weight>/histogram`` (and images ``.../image`` with
    ``write_images``) every ``histogram_freq`` epochs, the model's Keras config (``write_graph``)
    and a profile of ``profile_batch``. In ``<log_dir>/validation``: ``epoch_<metric>`` of the
    validation data and ``evaluation_<metric>_vs_iterations`` (step: the optimizer's iterations).

    Args:
      log_dir: the directory of the runs' event files.
      histogram_freq: write weight histograms every this many epochs (0: never).
      write_graph: write the model's config for the graph dashboard.
      write_images: write weights as images too (with ``histogram_freq``).
      write_steps_per_second: log the training speed, per epoch and batch.
      update_freq: 'epoch', 'batch' (every batch), or an integer N (every N batches).
      profile_batch: a batch number or ``(start, stop)`` to profile with ``jax.profiler``
        (a trace under ``<log_dir>/train/plugins/profile``); 0 turns it off.

    Needs the ``tensorboard`` package (``pip install 'minikeras[tensorboard]'``).

    >>> model.fit(x, y, epochs=5, validation_split=0.2,
    ...           callbacks=[mk.callbacks.TensorBoard("logs/fit", histogram_freq=1)])
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        summary.writer.tensorboard_modules()  # the clear error now rather than at the first epoch's end
        if embeddings_freq:
            raise NotImplementedError("TensorBoard: embeddings_freq (the embedding projector) is not supported; "
                                      "pass embeddings_freq=0")
        if update_freq != "epoch" and update_freq != "batch" and not (isinstance(update_freq, int)
                                                                        and update_freq > 0):
            raise ValueError(f"TensorBoard: update_freq must be 'epoch', 'batch' or a positive integer, received "
                             f"{update_freq!r}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._start_batch, self._stop_batch = _profile_range(profile_batch)
        self._should_trace = not (self._start_batch == 0 and self._stop_batch == 0)
        self._is_tracing = False
        self._global_train_batch = 0
        self._writers = {}
        if self.update_freq != "epoch" or self._should_trace or write_steps_per_second:
            # set on the instance so that fit calls batch hooks only when they are needed
            self.on_train_batch_begin = self._train_batch_begin
            self.on_train_batch_end = self._train_batch_end

    def set_model(self, model):
        self.model = model
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self.close_writers()
        if self.write_graph:
            self._write_model_config()

    def _writer(self, which):
        if which not in self._writers:
            self._writers[which] = summary.create_file_writer(self._train_dir if which == "train" else self._val_dir)
        return self._writers[which]

    def close_writers(self):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    def _write_model_config(self):
        if type(self.model).__name__ not in ("Sequential", "Functional"):
            return  # as Keras: a subclassed model has no config to draw
        try:
            config = json.dumps(to_keras(serialize_keras_object(self.model)), default=str)
        except Exception as error:  # noqa: BLE001 - a drawing is not worth failing fit for, as in Keras
            warnings.warn(f"TensorBoard: model failed to serialize as JSON, no graph written ({error})", stacklevel=2)
            return
        with self._writer("train").as_default():
            summary.ops.keras_model("keras", config, step=0)

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0

    def on_train_end(self, logs=None):
        if self._is_tracing:
            self._stop_trace()
        self.close_writers()

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = time.time()
        self._epoch_start_iterations = self._iterations()

    def _train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        self._batch_start = time.time()
        if self._should_trace and self._global_train_batch == self._start_batch:
            self._start_trace()

    def _train_batch_end(self, batch, logs=None):
        step = self._global_train_batch
        if self.update_freq != "epoch" and step % self.update_freq == 0:
            values = dict(_scalars(logs))
            if self.write_steps_per_second:
                values["steps_per_second"] = 1.0 / max(time.time() - self._batch_start, 1e-9)
            with self._writer("train").as_default():
                for name, value in values.items():
                    summary.scalar(f"batch_{name}", value, step=step)
        if self._is_tracing and step >= self._stop_batch:
            self._stop_trace()

    def on_test_end(self, logs=None):
        iterations = self._iterations()
        if iterations is None:
            return
        with self._writer("val").as_default():
            for name, value in _scalars(logs):
                summary.scalar(f"evaluation_{name}_vs_iterations", value, step=iterations)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        train_logs = {k: v for k, v in _scalars(logs) if not k.startswith("val_")}
        val_logs = {k[4:]: v for k, v in _scalars(logs) if k.startswith("val_")}
        learning_rate = self._learning_rate()
        if learning_rate is not None:
            train_logs["learning_rate"] = learning_rate
        if self.write_steps_per_second:
            seconds = max(time.time() - self._epoch_start, 1e-9)
            train_logs["steps_per_second"] = ((self._iterations() or 0) - (self._epoch_start_iterations or 0)) / seconds
        for which, values in (("train", train_logs), ("val", val_logs)):
            if values:
                with self._writer(which).as_default():
                    for name, value in values.items():
                        summary.scalar(f"epoch_{name}", value, step=epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _iterations(self):
        optimizer = getattr(self.model, "optimizer", None)
        iterations = getattr(optimizer, "iterations", None)
        return None if iterations is None else int(np.asarray(iterations.numpy()))

    def _learning_rate(self):
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # a LossScaleOptimizer's
        learning_rate = getattr(optimizer, "learning_rate", None)
        if learning_rate is None:
            return None
        value = learning_rate.numpy() if hasattr(learning_rate, "numpy") else learning_rate
        try:
            return float(np.asarray(value).reshape(()))
        except (TypeError, ValueError):
            return None

    def _log_weights(self, epoch):
        # Keras 3 on TF tags a weight by its variable name, its path: 'sequential/dense/kernel'
        with self._writer("train").as_default():
            for layer in self.model.layers:
                for weight in layer.weights:
                    name = weight.path.replace(":", "_")
                    values = weight.numpy()
                    summary.histogram(f"{name}/histogram", values, step=epoch)
                    if self.write_images:
                        images = _weight_as_images(values)
                        if images is not None:
                            summary.image(f"{name}/image", images, step=epoch)

    def _start_trace(self):
        try:
            jax.profiler.start_trace(self._train_dir)
            self._is_tracing = True
        except Exception as error:  # noqa: BLE001 - profiler errors are not fatal, as in Keras
            warnings.warn(f"TensorBoard: the profiler could not start ({error})", stacklevel=2)
            self._should_trace = False

    def _stop_trace(self):
        try:
            jax.profiler.stop_trace()
        except Exception as error:  # noqa: BLE001
            warnings.warn(f"TensorBoard: the profiler could not stop ({error})", stacklevel=2)
        self._is_tracing = False
        self._should_trace = False


def _profile_range(profile_batch):
    message = ("profile_batch must be a non-negative integer or 2-tuple of positive integers. A pair of positive "
               f"integers signifies a range of batches to profile. Found: {profile_batch}")
    if isinstance(profile_batch, str):
        profile_batch = [int(part) for part in profile_batch.split(",")]
        profile_batch = profile_batch[0] if len(profile_batch) == 1 else profile_batch
    if isinstance(profile_batch, int):
        start = stop = profile_batch
    elif isinstance(profile_batch, (tuple, list)) and len(profile_batch) == 2:
        start, stop = profile_batch
    else:
        raise ValueError(message)
    if start < 0 or stop < start:
        raise ValueError(message)
    return start, stop


def _scalars(logs):
    """The (name, float) pairs of ``logs`` that are single numbers."""
    for name, value in (logs or {}).items():
        value = np.asarray(value)
        if value.size == 1 and value.dtype.kind in "biuf":
            yield name, float(value.reshape(()))


def _weight_as_images(weight):
    """A weight as images of shape (k, height, width, 1), laid out as Keras does (a bias as one
    row, a kernel as its matrix turned wider than tall, a 1-D convolution's filters one image
    each; None for other shapes), with values scaled to [0, 1] (Keras hands the raw values to
    the image summary, which clips them to [0, 1])."""
    image = np.squeeze(weight)
    if image.ndim == 1:
        image = image.reshape(1, image.shape[0], 1, 1)
    elif image.ndim == 2:
        if image.shape[0] > image.shape[1]:
            image = image.T
        image = image.reshape(1, image.shape[0], image.shape[1], 1)
    elif image.ndim == 3:
        image = np.transpose(image, (2, 0, 1))[..., None]
    if image.ndim != 4 or image.shape[-1] not in (1, 3, 4):
        return None
    low, high = float(image.min()), float(image.max())
    return (image - low) / (high - low) if high > low else np.zeros_like(image)

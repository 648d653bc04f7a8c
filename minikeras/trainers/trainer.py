"""compile / fit / evaluate / predict: the Keras training loop over compiled steps.

Each of ``train_step``, ``test_step`` and ``predict_step`` is compiled once with
``mk.function`` (its Variables - weights, optimizer slots, metric state, the random
generator - are lifted automatically), so a step is one XLA program. Override them to
customise training, as in Keras ("customizing what happens in fit").
"""
import inspect
import warnings

import jax
import numpy as np

from minikeras import losses, metrics as metrics_module, optimizers
from minikeras.backend import max_epochs
from minikeras.callbacks import CallbackList, ProgbarLogger
from minikeras.distribute import Distribution, get_distribution
from minikeras.module import tracked_items
from minikeras.ops.random import numpy_seed
from minikeras.ops.reduce import reduce_sum
from minikeras.programs.function import function
from minikeras.tape import GradientTape
from minikeras.tensor import Tensor, Variable
from minikeras.trainers import data_adapter, host_prefix
from minikeras.trainers.class_weight import class_weight_dataset, class_weight_to_sample_weights
from minikeras.trainers.label_check import check_sparse_labels
from minikeras.trainers.logs import TEST_BATCH_HOOKS, TRAIN_BATCH_HOOKS, to_floats, wants_batch_logs
from minikeras.trainers.output_losses import OutputLosses, as_loss_object, is_multi_output
from minikeras.trainers.step_runner import StepRunner


class Trainer:
    """Mixin that gives Models compile/fit/evaluate/predict (see ``Model``)."""

    # The attributes below: training state, not part of the model's weights.
    TRAINING_STATE = frozenset({"optimizer", "loss", "compiled", "stop_training", "history", "_trainer_steps",
                                "_trainer_metrics", "_trainer_weighted", "_trainer_loss_tracker",
                                "_trainer_metric_specs", "_trainer_weighted_specs", "_trainer_jit",
                                "_trainer_steps_per_execution", "_trainer_distribution", "_trainer_outputs",
                                "_trainer_loss_weight"})

    def __init__(self):
        self.optimizer = None
        self.loss = None
        self.compiled = False
        self.stop_training = False
        self.history = None
        self._trainer_steps = {}
        self._trainer_metrics = []
        self._trainer_weighted = []
        self._trainer_weighted_specs = []
        self._trainer_loss_tracker = None
        self._trainer_metric_specs = []
        self._trainer_jit = True
        self._trainer_steps_per_execution = 1
        self._trainer_distribution = None
        self._trainer_outputs = None
        self._trainer_loss_weight = 1.0

    # -- compile --------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, weighted_metrics=None,
                run_eagerly=False, steps_per_execution=1, jit_compile=True, distribution=None, auto_scale_loss=True):
        """Configures training: optimizer, loss and metrics (objects or names, e.g. 'adam',
        'sparse_categorical_crossentropy', ['accuracy']).

        Args:
          run_eagerly / jit_compile: ``jit_compile=False`` (or ``run_eagerly=True``) runs steps eagerly,
            for debugging.
          steps_per_execution: run this many training steps in one compiled call.
          distribution: a ``keras.distribution.DataParallel`` or ``ModelParallel``: the compiled steps
            of this model run on its devices (batches split; weights replicated, or split as its
            layout map says). None: the global one, if set.
          auto_scale_loss: under the 'mixed_float16' policy, wrap the optimizer in a
            ``LossScaleOptimizer`` (as Keras 3).
        """
        self.optimizer = optimizers.get(optimizer)
        if auto_scale_loss and self.dtype_policy.name == "mixed_float16" \
                and not isinstance(self.optimizer, optimizers.LossScaleOptimizer):
            self.optimizer = optimizers.LossScaleOptimizer(self.optimizer, name="loss_scale_optimizer")
        self._compile_outputs(loss, loss_weights, metrics)
        loss, loss_weights = _single_output(loss), _single_output(loss_weights)
        metrics = _single_output_metrics(metrics)
        self.loss = as_loss_object(losses.get(loss)) if loss is not None and not is_multi_output(loss) else None
        single_weight = loss_weights is not None and not is_multi_output(loss_weights)
        self._trainer_loss_weight = float(loss_weights) if single_weight else 1.0
        if metrics is not None and not isinstance(metrics, (list, tuple, dict)):
            raise TypeError(f"compile: `metrics` should be a list of metrics, received {metrics!r}")
        per_output = isinstance(metrics, dict) or any(isinstance(m, (list, tuple, dict)) for m in metrics or [])
        self._trainer_metric_specs = [] if per_output else list(metrics or [])
        weighted_metrics = _single_output_metrics(weighted_metrics)
        if isinstance(weighted_metrics, dict) or any(isinstance(m, (list, tuple, dict))
                                                     for m in weighted_metrics or []):
            raise NotImplementedError("compile: weighted_metrics per output are not supported yet; pass a list of "
                                      "metrics for a model with one output")
        self._trainer_weighted_specs = list(weighted_metrics or [])
        # resolved now when the loss decides what 'accuracy' means (so that a custom train_step
        # sees them in self.metrics), else on the first batch, from the shapes
        try:
            self._resolve_metrics_with(None, None)
        except ValueError:
            self._trainer_metrics = self._trainer_weighted = None
        self._trainer_loss_tracker = metrics_module.Mean(name="loss")
        self._trainer_jit = bool(jit_compile) and not run_eagerly
        self._check_steps_per_execution(steps_per_execution)
        self._trainer_steps_per_execution = int(steps_per_execution)
        self._trainer_distribution = _check_distribution(distribution)
        self._trainer_steps = {}
        self.compiled = True

    @staticmethod
    def _check_steps_per_execution(n):
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"steps_per_execution must be a positive integer, received {n!r}")

    def _require_compiled(self, what):
        if not self.compiled:
            raise RuntimeError(f"You must call compile() before {what}().")

    def _compile_outputs(self, loss, loss_weights, metrics):
        """Keeps compile's arguments for a model with several outputs (resolved on the first batch)."""
        self._trainer_outputs = OutputLosses(loss, loss_weights, metrics)

    def _outputs_for(self, y, y_pred):
        """The per-output losses and metrics, resolved for the outputs of ``y_pred`` on first use."""
        outputs = self._trainer_outputs
        if not outputs.built:
            names = getattr(self, "output_names", None)
            if isinstance(y_pred, dict):
                names = list(y_pred)
            elif names is None or len(names) != len(y_pred):
                names = [f"output_{i}" for i in range(len(y_pred))]
            outputs.names = list(names)  # so that flatten() can order y by name
            ys = None if y is None else outputs.flatten(y, "y")
            outputs.names = None
            outputs.build(names, ys, list(y_pred.values()) if isinstance(y_pred, dict) else list(y_pred))
        return outputs

    @property
    def metrics(self):
        """The loss tracker first, then the compiled metrics (Keras's ``model.metrics``); with
        several outputs, each output's loss tracker comes before the metrics."""
        found = [self._trainer_loss_tracker] if self._trainer_loss_tracker is not None else []
        outputs = getattr(self, "_trainer_outputs", None)
        if outputs is not None and outputs.built:
            found += outputs.all_metrics()
        else:
            found += list(self._trainer_metrics or []) + list(self._trainer_weighted or [])
        return found + _attribute_metrics(self, found)

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def _resolve_metrics(self, y, y_pred):
        if self._trainer_metrics is not None:
            return
        self._resolve_metrics_with(None if y is None else tuple(np.shape(y)), tuple(y_pred.shape))

    def _resolve_metrics_with(self, y_shape, y_pred_shape):
        """The compiled metrics, and the weighted ones (named ``weighted_<name>`` where an
        unweighted metric has the same name, as Keras 3 logs them)."""
        def resolve(spec):
            return metrics_module.resolve(spec, self.loss, y_shape, y_pred_shape)

        metrics = [resolve(m) for m in self._trainer_metric_specs]
        weighted = [resolve(m) for m in self._trainer_weighted_specs]
        names = {m.name for m in metrics}
        for metric in weighted:
            if metric.name in names:
                metric.name = f"weighted_{metric.name}"
        self._trainer_metrics, self._trainer_weighted = metrics, weighted

    # -- the steps users may override ------------------------------------------------------
    @property
    def metric_specs(self):
        """The metrics as given to ``compile`` (names or Metric objects; empty for per-output
        metrics): what a ``.keras`` file's compile config records."""
        return list(self._trainer_metric_specs)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss of ``y_pred`` against ``y``, plus the sum of ``self.losses`` (the
        layers' regularization penalties and added losses), as Keras 3 adds them.

        Override it with Keras 3's signature; ``training`` may be left out of an override
        (fit and evaluate then call it without), as Keras allows."""
        extra = self.losses
        if is_multi_output(y_pred) and self._trainer_outputs is not None:
            total = self._outputs_for(y, y_pred).total(y, y_pred, sample_weight)
            for loss in extra:
                total = total + reduce_sum(loss)
            return total
        if self.loss is None and not extra:
            raise ValueError("No loss to compute: pass loss= to compile(), or override compute_loss/train_step")
        total = self.loss(y, y_pred, sample_weight=sample_weight) if self.loss is not None else 0.0
        if self._trainer_loss_weight != 1.0:
            total = total * self._trainer_loss_weight
        for loss in extra:
            total = total + reduce_sum(loss)
        return total

    def compiled_loss(self, y, y_pred, sample_weight=None, regularization_losses=None):
        """TF 2's ``compiled_loss`` (for custom ``train_step`` code written for tf.keras): the compiled
        loss plus the ``regularization_losses`` it is given (TF 2's guide passes ``self.losses``)."""
        if self.loss is None:
            raise ValueError("No loss to compute: pass loss= to compile(), or override compute_loss/train_step")
        total = self.loss(y, y_pred, sample_weight=sample_weight)
        for loss in regularization_losses or ():
            total = total + reduce_sum(loss)
        return total

    def _compute_loss(self, x, y, y_pred, sample_weight, training):
        """``compute_loss``, given ``training`` only where an override takes it (Keras 3.3 added it)."""
        if "training" in inspect.signature(self.compute_loss).parameters:
            return self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)
        return self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)

    def get_metrics_result(self):
        """``{name: result}`` of ``self.metrics`` (a metric whose result is a dict adds its items)."""
        logs = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                logs.update(result)
            else:
                logs[metric.name] = result
        return logs

    def compute_metrics(self, x, y, y_pred, sample_weight=None, loss=None):
        """Updates the compiled metrics (and the loss tracker, given ``loss``); returns
        ``get_metrics_result()``. Keras 3's signature is ``(x, y, y_pred, sample_weight=None)``:
        ``train_step`` and ``test_step`` update the loss tracker themselves, so overrides need
        not take ``loss``."""
        multi = is_multi_output(y_pred) and self._trainer_outputs is not None
        if not multi:
            self._resolve_metrics(y, y_pred)
        if loss is not None:  # weighted by the batch size: a short last batch counts for less
            self._trainer_loss_tracker.update_state(loss, sample_weight=_batch_size(x, y_pred))
        if multi:
            self._outputs_for(y, y_pred).update_metrics(y, y_pred)
        else:
            for metric in self._trainer_metrics:  # `metrics` ignore sample weights, as in Keras 3
                metric.update_state(y, y_pred)
            for metric in self._trainer_weighted:
                metric.update_state(y, y_pred, sample_weight=sample_weight)
        return self.get_metrics_result()

    @property
    def compiled_metrics(self):
        return _CompiledMetrics(self)

    def train_step(self, data):
        """One training step on a batch ``(x, y[, sample_weight])``; returns the logs dict."""
        x, y, sample_weight = data_adapter.unpack(data)
        _, forward = self.host_split()  # the model after its host layers (fit mapped them over x)
        with GradientTape() as tape:
            y_pred = forward(x, training=True)
            loss = self._compute_loss(x, y, y_pred, sample_weight, training=True)
            scaled_loss = self.optimizer.scale_loss(loss)  # the gradients are unscaled by apply, as Keras 3
        variables = self.trainable_variables
        if variables:
            gradients = tape.gradient(scaled_loss, variables)
            self.optimizer.apply_gradients(zip(gradients, variables))
        else:  # as Keras 3: the loss and metrics are still computed
            warnings.warn("The model does not have any trainable weights.", UserWarning, stacklevel=2)
        self._track_loss(x, y_pred, loss)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data):
        """One evaluation step; returns the logs dict."""
        x, y, sample_weight = data_adapter.unpack(data)
        y_pred = self.host_split()[1](x, training=False)
        loss = self._compute_loss(x, y, y_pred, sample_weight, training=False)
        self._track_loss(x, y_pred, loss)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _track_loss(self, x, y_pred, loss):
        if self._trainer_loss_tracker is not None:  # weighted by the batch size: a short last batch counts less
            self._trainer_loss_tracker.update_state(loss, sample_weight=_batch_size(x, y_pred))

    def predict_step(self, data):
        x, _, _ = data_adapter.unpack(data)
        return self.host_split()[1](x, training=False)

    # -- leading host layers -----------------------------------------------------------------
    def host_split(self, raw_shape=None):
        """``(host_fn, device_model)``: a function that runs the model's leading host layers
        (string preprocessing) on raw inputs on the host, and the model of the layers after
        them, which the compiled steps call; fit, evaluate and predict map ``host_fn`` over
        the data first. ``(None, self)`` here: every layer runs in the compiled steps. A
        Sequential and a functional model override it (``minikeras.models``); a subclassed
        model's ``call`` is Python code that cannot be cut, so it keeps this.
        ``raw_shape``: a function giving the raw inputs' shape, called where the model must be
        built first."""
        return None, self

    def check_raw_inputs(self, x):
        """Refuses raw inputs ``x`` (not a Dataset) that the compiled steps cannot take, before
        any step runs; nothing by default (a functional model refuses strings for a numeric Input)."""

    # -- compiled steps ----------------------------------------------------------------------
    def _step(self, kind):
        """The StepRunner of the compiled train, test or predict step (made on first use)."""
        runner = self._trainer_steps.get(kind)
        if runner is None:
            method = {"train": self.train_step, "test": self.test_step, "predict": self.predict_step}[kind]
            runner = StepRunner(function(method, jit_compile=self._trainer_jit))
            self._trainer_steps[kind] = runner
        return runner

    def _run(self, kind, batches, group=False):
        """Runs ``batches`` (``(x, y, sample_weight)`` tuples) through the compiled ``kind``
        step in order (as one scanned call when ``group``); returns the last step's outputs."""
        runner = self._step(kind)
        distribution = getattr(self, "_trainer_distribution", None)
        try:
            if distribution is None:
                return runner.run(batches, group)
            with distribution:  # mk.distribute: the compiled steps run on its devices
                return runner.run(batches, group)
        except BaseException:
            if not runner.traced:  # its first trace failed (bad labels, say): trace afresh next
                self._trainer_steps.pop(kind, None)  # time, when it may still create slots
            raise

    def _check_distributed_batches(self, data):
        """A batch size the devices cannot share evenly fails before the first step."""
        distribution = getattr(self, "_trainer_distribution", None) or get_distribution()
        if distribution is not None and getattr(self, "_trainer_jit", True):
            distribution.check_batches(data)

    # -- resuming ----------------------------------------------------------------------------
    data_order_seed = None  # fit's shuffle seed: saved with the weights (mk.saving.random_state)

    def _data_order_seed(self, fresh):
        """The seed of this fit's shuffle orders (epoch ``e`` shuffles with ``[seed, e]``): a
        ``fresh`` one for a fit from epoch 0 (repeatable after ``mk.random.set_seed``), else
        the last fit's (or the loaded checkpoint's), when resuming."""
        if fresh or self.data_order_seed is None:
            self.data_order_seed = numpy_seed()
        return self.data_order_seed

    def resume_training_at(self, epoch, step=0):
        """Makes the running ``fit`` start at ``epoch``, skipping its first ``step`` steps
        (which a restored checkpoint has done); for callbacks' ``on_train_begin``, as
        ``BackupAndRestore`` does."""
        self._resume_point = (int(epoch), int(step))

    # -- fit / evaluate / predict ------------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None, sample_weight=None,
            initial_epoch=0, steps_per_epoch=None, validation_steps=None, validation_batch_size=None,
            validation_freq=1, steps_per_execution=None, distribution=None):
        """Trains for ``epochs`` epochs; returns a ``History`` (``history.history['loss']``, ...).

        ``x`` may be arrays/Tensors (with ``y``), or an ``mk.data.Dataset``, a ``keras.utils.PyDataset``
        or a Python generator of ``(x, y)`` batches.
        ``verbose``: 1 (a progress bar per epoch), 2 (one line per epoch), 0 (silent).
        """
        self._require_compiled("fit")
        epochs = self._fit_settings(epochs, steps_per_execution, distribution)
        x = data_adapter.python_batches_as_dataset(x, shuffle)
        x, y, sample_weight, validation_data = self._fit_data(x, y, sample_weight, validation_data, validation_split,
                                                              class_weight)
        train = data_adapter.make_batches(x, y, sample_weight, batch_size, shuffle, steps_per_epoch)
        self._check_distributed_batches(train)
        verbose = 1 if verbose == "auto" else int(verbose)
        callback_list = CallbackList(callbacks, add_history=True, progbar=ProgbarLogger,
                                     model=self, verbose=verbose, epochs=epochs, steps=train.steps)
        initial_epoch, resume_step, data_order_seed = self._fit_begin(callback_list, initial_epoch)
        per_call = self._trainer_steps_per_execution
        batch_hooks = wants_batch_logs(callback_list.callbacks, TRAIN_BATCH_HOOKS)
        if resume_step is not None and steps_per_epoch is not None and isinstance(train, data_adapter.ArrayBatches):
            for done in range(initial_epoch):  # a pass goes on across epochs: where the ones before left it
                for _ in train.epoch_groups(_numpy_rng(data_order_seed, done), per_call):
                    pass
        epoch_logs = {}
        for epoch in range(initial_epoch, epochs):
            for metric in self.metrics:
                metric.reset_state()
            callback_list.on_epoch_begin(epoch)
            groups = iter(train.epoch_groups(_numpy_rng(data_order_seed, epoch), per_call))
            skip = resume_step if resume_step and epoch == initial_epoch else 0
            epoch_logs = self._fit_epoch(groups, skip, callback_list, per_call, batch_hooks)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self._fit_validation(validation_data, validation_batch_size or batch_size,
                                                validation_steps, callback_list)
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callback_list.on_epoch_end(epoch, epoch_logs)
            if self.stop_training:
                break
        if epochs > initial_epoch and self.optimizer.built:
            self.optimizer.finalize_variable_values(self.trainable_weights)  # use_ema: the averages, as Keras
        callback_list.on_train_end(epoch_logs)
        return self.history

    def _fit_settings(self, epochs, steps_per_execution, distribution):
        """fit's settings that outlive the call (``steps_per_execution``, ``distribution``) and
        the number of epochs after Keras's debugging cap (``keras.config.set_max_epochs``)."""
        if max_epochs() and max_epochs() < epochs:
            warnings.warn(f"Limiting epochs to {max_epochs()}", stacklevel=3)
            epochs = max_epochs()
        if steps_per_execution is not None:
            self._check_steps_per_execution(steps_per_execution)
            self._trainer_steps_per_execution = int(steps_per_execution)
        if distribution is not None:  # as compile(distribution=...), from now on
            self._trainer_distribution = _check_distribution(distribution)
        return epochs

    def _fit_data(self, x, y, sample_weight, validation_data, validation_split, class_weight):
        """fit's training and validation data as the compiled steps take them: the leading host
        layers applied, the validation split made, class weights folded into the sample
        weights, the sparse labels checked. Returns ``(x, y, sample_weight, validation_data)``."""
        x = host_prefix.model_inputs(self, x)  # leading string layers run on the host
        if validation_data is not None:
            val_x, val_y, val_sw = _unpack_validation(validation_data)
            validation_data = (host_prefix.model_inputs(self, val_x), val_y, val_sw)
        if validation_split and validation_data is None:
            (x, y, sample_weight), validation_data = data_adapter.split_validation(x, y, sample_weight,
                                                                                   validation_split)
        if class_weight is not None:
            if data_adapter.is_dataset(x):
                x = class_weight_dataset(x, class_weight)
            else:
                sample_weight = class_weight_to_sample_weights(y, class_weight, sample_weight)
        check_sparse_labels(self, y, "fit's y")
        if validation_data is not None:
            check_sparse_labels(self, _unpack_validation(validation_data)[1], "fit's validation labels")
        return x, y, sample_weight, validation_data

    def _fit_begin(self, callback_list, initial_epoch):
        """Tells the callbacks that training begins and returns where it starts: ``(initial_epoch,
        resume_step, data_order_seed)``; ``resume_step`` is None unless a callback
        (``BackupAndRestore``) resumes an earlier fit, and then the steps it had done."""
        self.stop_training = False
        self._resume_point = None
        callback_list.on_train_begin()
        resumed = self._resume_point is not None  # set by BackupAndRestore
        initial_epoch, resume_step = self._resume_point or (initial_epoch, None)
        data_order_seed = self._data_order_seed(fresh=initial_epoch == 0 and not resumed)
        return initial_epoch, resume_step, data_order_seed

    def _fit_epoch(self, groups, skip, callback_list, per_call, batch_hooks):
        """Runs one epoch's groups of batches through the compiled train step (the first
        ``skip`` steps skipped, done by a resumed fit) and returns the epoch's logs as floats."""
        logs = {}
        step = _skip_steps(groups, skip) if skip else 0
        for group in groups:
            if batch_hooks:
                callback_list.on_train_batch_begin(step)
            # only full groups are scanned: a shorter one (the end of an epoch) would
            # compile another scan for its length, so it runs step by step instead
            logs = self._run("train", group, group=len(group) == per_call > 1)
            step += len(group)
            if batch_hooks:
                logs = to_floats(logs)
                callback_list.on_train_batch_end(step - 1, logs)
            if self.stop_training:
                break
        if not logs:  # no step ran (a Dataset of unknown length ended at once): the reset metrics, as Keras
            logs = {m.name: m.result() for m in self.metrics}
        return to_floats(logs) if logs else {}

    def _fit_validation(self, validation_data, batch_size, steps, callback_list):
        """The validation logs at the end of an epoch (fit's callbacks see its test hooks)."""
        val_x, val_y, val_sw = _unpack_validation(validation_data)
        if data_adapter.is_dataset(val_x):
            batch_size = None  # fit's batch_size is for its arrays: a Dataset comes batched, as in Keras
        return self.evaluate(val_x, val_y, sample_weight=val_sw, batch_size=batch_size, steps=steps, verbose=0,
                             return_dict=True, callbacks=callback_list, _internal=True)

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False, _internal=False):
        """Loss and metrics on the data: a scalar (loss only), a list, or a dict with ``return_dict``."""
        self._require_compiled("evaluate")
        if not _internal:  # fit's validation data went through the leading host layers already
            x = host_prefix.model_inputs(self, data_adapter.python_batches_as_dataset(x))
            check_sparse_labels(self, y, "evaluate's y")
        data = data_adapter.make_batches(x, y, sample_weight, batch_size, False, steps)
        self._check_distributed_batches(data)
        verbose = (0 if _internal else 1) if verbose == "auto" else int(verbose)
        callback_list = callbacks if isinstance(callbacks, CallbackList) else CallbackList(
            callbacks, add_history=False, progbar=ProgbarLogger, model=self, verbose=verbose, epochs=1,
            steps=data.steps)  # fit's own list: its callbacks see the validation (on_test_* hooks), as in Keras
        for metric in self.metrics:
            metric.reset_state()
        callback_list.on_test_begin()
        batch_hooks = wants_batch_logs(callback_list.callbacks, TEST_BATCH_HOOKS)
        logs = {}
        for i, batch in enumerate(data.epoch(None)):
            if batch_hooks:
                callback_list.on_test_batch_begin(i)
            logs = self._run("test", [batch])
            if batch_hooks:
                callback_list.on_test_batch_end(i, to_floats(logs))
        logs = to_floats(logs)
        callback_list.on_test_end(logs)
        if return_dict:
            return logs
        values = [logs[name] for name in self.metrics_names if name in logs]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Model outputs for ``x``, computed in batches (default 32), as NumPy arrays."""
        x = host_prefix.model_inputs(self, data_adapter.python_batches_as_dataset(x))
        data = data_adapter.make_batches(x, None, None, batch_size, False, steps)
        self._check_distributed_batches(data)
        verbose = 1 if verbose == "auto" else int(verbose)
        callback_list = CallbackList(callbacks, add_history=False, progbar=ProgbarLogger,
                                     model=self, verbose=verbose, epochs=1, steps=data.steps)
        callback_list.on_predict_begin()
        outputs = []
        for i, batch in enumerate(data.epoch(None)):
            callback_list.on_predict_batch_begin(i)
            outputs.append(self._run("predict", [batch]))
            # Keras hands each batch's outputs to the callbacks under "outputs".
            callback_list.on_predict_batch_end(i, {"outputs": outputs[-1]})
        callback_list.on_predict_end()
        if not outputs:
            raise ValueError("predict received no data")
        return jax.tree_util.tree_map(lambda *parts: np.concatenate([np.asarray(p) for p in parts]), *outputs,
                                      is_leaf=lambda v: isinstance(v, Tensor))

    def train_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True, return_dict=False):
        """One training step on one batch; returns the loss (and metrics)."""
        self._require_compiled("train_on_batch")
        if reset_metrics:
            for metric in self.metrics:
                metric.reset_state()
        logs = to_floats(self._run("train", [(host_prefix.model_inputs(self, x), y, sample_weight)]))
        return self._format_logs(logs, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True, return_dict=False):
        """Loss (and metrics) on one batch, without training."""
        self._require_compiled("test_on_batch")
        if reset_metrics:
            for metric in self.metrics:
                metric.reset_state()
        logs = to_floats(self._run("test", [(host_prefix.model_inputs(self, x), y, sample_weight)]))
        return self._format_logs(logs, return_dict)

    def predict_on_batch(self, x):
        return np.asarray(self._run("predict", [(host_prefix.model_inputs(self, x), None, None)]))

    def _format_logs(self, logs, return_dict):
        if return_dict:
            return logs
        values = [logs[name] for name in self.metrics_names if name in logs]
        return values[0] if len(values) == 1 else values


def _check_distribution(distribution):
    if distribution is not None and not isinstance(distribution, Distribution):
        raise TypeError(f"distribution must be a keras.distribution.DataParallel or ModelParallel, or None; received "
                        f"{type(distribution).__name__}")
    return distribution


def _batch_size(x, y_pred):
    for leaf in jax.tree_util.tree_leaves((x, y_pred), is_leaf=lambda v: isinstance(v, (Tensor, Variable))):
        shape = np.shape(leaf) if not isinstance(leaf, (Tensor, Variable)) else leaf.shape
        if shape:
            return int(shape[0])
    return 1


def _single_output(spec):
    """A loss or loss weight given as a one-entry list or dict (a model with one output): its entry."""
    if isinstance(spec, (list, tuple, dict)) and len(spec) == 1:
        return next(iter(spec.values())) if isinstance(spec, dict) else spec[0]
    return spec


def _single_output_metrics(metrics):
    """Metrics given per output for a model with one output (``{"out": "mae"}``, ``[["mae"]]``): its list."""
    if isinstance(metrics, dict) and len(metrics) == 1:
        metrics = next(iter(metrics.values()))
    elif isinstance(metrics, (list, tuple)) and len(metrics) == 1 and isinstance(metrics[0], (list, tuple)):
        metrics = metrics[0]
    return [metrics] if metrics is not None and not isinstance(metrics, (list, tuple, dict)) else metrics


class _CompiledMetrics:
    """TF 2's ``model.compiled_metrics``, for custom train_step code written for tf.keras."""

    def __init__(self, model):
        self._model = model

    def update_state(self, y, y_pred, sample_weight=None):
        model = self._model
        model._resolve_metrics(y, y_pred)
        for metric in model._trainer_metrics:
            metric.update_state(y, y_pred, sample_weight=sample_weight)

    @property
    def metrics(self):
        return list(self._model._trainer_metrics or [])


def _attribute_metrics(model, listed):
    """The Metrics held by attributes of ``model`` and its layers that ``listed`` lacks (a custom
    step's trackers): Keras 3 counts them in ``model.metrics``, so fit logs and resets them."""
    seen, found = {id(m) for m in listed}, []
    for owner in [model] + model.submodules:
        for _, _, item in tracked_items(owner):
            if isinstance(item, metrics_module.Metric) and id(item) not in seen:
                seen.add(id(item))
                found.append(item)
    return found


def _unpack_validation(validation_data):
    validation_data = data_adapter.python_batches_as_dataset(validation_data)
    if data_adapter.is_dataset(validation_data):
        return validation_data, None, None
    if isinstance(validation_data, tuple) and len(validation_data) in (2, 3):
        return validation_data + (None,) * (3 - len(validation_data))
    raise ValueError("validation_data must be a tuple (x_val, y_val) or (x_val, y_val, val_sample_weight), or a "
                     f"Dataset; received {type(validation_data).__name__}")


def _numpy_rng(seed, epoch):
    """The generator of fit's shuffling in ``epoch``: a pure function of the seed and the epoch."""
    return _LazyGenerator([seed, epoch])


def _skip_steps(groups, steps):
    """Consumes the first ``steps`` steps of an epoch's ``groups``; returns the steps skipped."""
    done = 0
    for group in groups:
        done += len(group)
        if done >= steps:
            break
    return done


class _LazyGenerator:
    """``np.random.default_rng(seed)``, made on first use: a fit that does not shuffle never
    pays for it. (The seed is drawn when fit starts, so the sequence of draws after
    ``mk.random.set_seed`` does not depend on shuffling.)"""

    def __init__(self, seed):
        self._seed, self._generator = seed, None

    def __getattr__(self, name):  # the Generator's methods (the attributes above are found first)
        if self._generator is None:
            self._generator = np.random.default_rng(self._seed)
        return getattr(self._generator, name)


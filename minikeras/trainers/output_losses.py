"""Losses and metrics per output, for models with several outputs (Keras 3's CompileLoss and
CompileMetrics): ``compile(loss=[...] or {...}, loss_weights=..., metrics=[[...], [...]] or {...})``.

The total loss is ``sum(loss_weight[i] * loss[i](y[i], y_pred[i]))``; each output's loss is
tracked as ``<output>_loss`` and each of its metrics logged as ``<output>_<metric>``, where
``<output>`` is the output's name (the dict key, or the name of the layer that makes it).
"""
import jax

from minikeras import losses as losses_module, metrics as metrics_module
from minikeras.losses.base import Loss, LossFunctionWrapper
from minikeras.tensor import Tensor, Variable


def is_multi_output(structure):
    """Whether ``structure`` (model outputs, or losses) is a list/tuple/dict of several entries."""
    return isinstance(structure, (list, tuple, dict)) and len(structure) > 1


def _leaves(structure):
    return jax.tree_util.tree_leaves(structure, is_leaf=lambda v: isinstance(v, (Tensor, Variable)) or v is None)


def as_loss_object(loss):
    """A loss function (e.g. from the string 'mse') wrapped as a Loss, as Keras's compile does."""
    return loss if isinstance(loss, Loss) else LossFunctionWrapper(loss, name=getattr(loss, "__name__", None))


class OutputLosses:
    """The per-output losses, weights and metrics of a compiled multi-output model; resolved
    against the model's output names on the first batch (``build``).

    Args:
      loss, loss_weights, metrics: as given to ``compile``.
    """

    def __init__(self, loss, loss_weights=None, metrics=None):
        self.loss_spec, self.weights_spec, self.metrics_spec = loss, loss_weights, metrics
        self.names = None
        self.losses = self.weights = self.trackers = self.metrics = None

    @property
    def built(self):
        return self.names is not None

    def build(self, names, y_true, y_pred):
        """Resolves the losses, weights and metrics for outputs called ``names``."""
        n = len(names)
        self.losses = [None if spec is None else as_loss_object(losses_module.get(spec))
                       for spec in _per_output(self.loss_spec, names, "loss", broadcast=True)]
        weights = _per_output(self.weights_spec, names, "loss_weights", broadcast=False, default=1.0)
        self.weights = [1.0 if w is None else float(w) for w in weights]
        metric_specs = _per_output(self.metrics_spec, names, "metrics", broadcast=False, default=None,
                                   nested=True)
        self.metrics = []
        for i, specs in enumerate(metric_specs):
            if specs is None:
                continue
            specs = specs if isinstance(specs, (list, tuple)) else [specs]
            y_shape = None if y_true is None else tuple(getattr(y_true[i], "shape", ()))
            for spec in specs:
                metric = metrics_module.resolve(spec, self.losses[i], y_shape, tuple(y_pred[i].shape))
                metric.name = f"{names[i]}_{metric.name}"
                self.metrics.append((i, metric))
        self.metrics.sort(key=lambda item: item[1].name)  # Keras 3 logs them sorted by name
        # Keras 3 tracks each output's loss only where two or more outputs have one
        tracked = sum(loss is not None for loss in self.losses) > 1
        self.trackers = [metrics_module.Mean(name=f"{name}_loss") if loss is not None and tracked else None
                         for name, loss in zip(names, self.losses)]
        self.names = list(names)
        if n and all(loss is None for loss in self.losses) and self.loss_spec is not None:
            raise ValueError(f"compile: no loss applies to any of the outputs {list(names)}")

    def flatten(self, structure, what):
        """``structure`` (y, or sample weights) as a list in the outputs' order."""
        if isinstance(structure, dict):
            unknown = [k for k in structure if k not in self.names]
            if unknown:
                raise ValueError(f"{what} is a dict with keys {sorted(structure)}, but the model's outputs are "
                                 f"{self.names}")
            return [structure.get(name) for name in self.names]
        if isinstance(structure, (list, tuple)):
            if len(structure) != len(self.names):
                raise ValueError(f"The model has {len(self.names)} outputs {self.names}, but {what} has "
                                 f"{len(structure)} entries")
            return list(structure)
        return [structure] * len(self.names)

    def total(self, y, y_pred, sample_weight):
        """The weighted sum of the outputs' losses; updates each output's loss tracker.

        One target array for several outputs goes to the one output with a loss where a list of
        losses has one that is not None (keras.io's miniature GPT: ``loss=[loss_fn, None]``), as
        in Keras 3.15.

        Raises:
          KeyError, ValueError: as Keras 3.15, for one target array given to several outputs
            otherwise (a KeyError naming the first output's path with one loss, a ValueError
            showing both structures with a list or dict of losses).
        """
        if y is not None and not isinstance(y, (list, tuple, dict)) and len(self.names) > 1:
            one_loss = (isinstance(self.loss_spec, (list, tuple))
                        and sum(loss is not None for loss in self.losses) == 1)
            if not one_loss:
                raise _single_target_error(self.loss_spec, y_pred)
        ys, preds = self.flatten(y, "y"), self.flatten(y_pred, "y_pred")
        weights = self.flatten(sample_weight, "sample_weight")
        total = 0.0
        for loss, w, tracker, yt, yp, sw in zip(self.losses, self.weights, self.trackers, ys, preds, weights):
            if loss is None:
                continue
            value = loss(yt, yp, sample_weight=sw)
            if tracker is not None:
                tracker.update_state(value, sample_weight=yp.shape[0] if yp.ndim else 1)
            total = total + w * value
        return total

    def update_metrics(self, y, y_pred):
        """Updates each output's metrics (unweighted: compile's ``metrics`` ignore sample weights, as in Keras 3)."""
        ys, preds = self.flatten(y, "y"), self.flatten(y_pred, "y_pred")
        for i, metric in self.metrics:
            metric.update_state(ys[i], preds[i])

    def all_metrics(self):
        """The loss trackers (outputs' order), then the metrics (by name)."""
        if not self.built:
            return []
        return [t for t in self.trackers if t is not None] + [m for _, m in self.metrics]


def _single_target_error(loss_spec, y_pred):
    if isinstance(loss_spec, (list, tuple, dict)):
        stars = ({k: "*" for k in y_pred} if isinstance(y_pred, dict) else ["*" for _ in y_pred])
        return ValueError(f"y_true and y_pred have different structures.\ny_true: *\ny_pred: {stars}\n")
    first = next(iter(y_pred)) if isinstance(y_pred, dict) else 0
    return KeyError(f"The path: {(first,)} in the `loss` argument, can't be found in either the model's output "
                    "(`y_pred`) or in the labels (`y_true`).")


def _per_output(spec, names, what, broadcast, default=None, nested=False):
    """``spec`` (one value, a list, or a dict by output name) as one entry per output."""
    n = len(names)
    if spec is None:
        return [default] * n
    if isinstance(spec, dict):
        unknown = [k for k in spec if k not in names]
        if unknown:
            raise ValueError(f"Expected keys {list(names)} in {what} dict, but found {what}.keys()={list(spec)} "
                             f"(unknown: {unknown})")
        return [spec.get(name, default) for name in names]
    # A flat list of metrics as long as the outputs gives each output one (Keras 3.15 does so).
    if isinstance(spec, (list, tuple)) and (not nested or any(isinstance(s, (list, tuple, dict)) for s in spec)
                                            or len(spec) == n):
        if len(spec) != n:
            raise ValueError(f"compile: `{what}` is a list of {len(spec)} entries, but the model has {n} outputs "
                             f"{list(names)}: pass one per output, or a dict keyed by output name")
        return list(spec)
    if nested:
        raise ValueError(f"Invalid `metrics`: for a model with {n} outputs {list(names)} they should be a dict "
                         f"keyed by output name or a list with one entry (a list of metrics) per output. "
                         f"Received: metrics={spec!r}")
    if broadcast:
        return [spec] * n
    raise ValueError(f"compile: `{what}` should be a list with one entry per output or a dict keyed by output "
                     f"names {list(names)}, received {spec!r}")

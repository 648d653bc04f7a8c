"""Learning-rate schedules (``mk.optimizers.schedules``), Keras 3's formulas.

A schedule maps the optimizer's step count to a learning rate; pass it as ``learning_rate``:

    lr = mk.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1000, decay_rate=0.96)
    opt = mk.optimizers.SGD(learning_rate=lr)

Schedules are built from minikeras ops, so inside a compiled step they are evaluated from the
``iterations`` Variable on every call without retracing.
"""
import math

from minikeras.ops.math import cast, ceil, cos, equal, floor, log, logical_and, minimum, pow, where
from minikeras.tensor import Tensor, Variable, to_array


def _float(value):
    return Tensor(to_array(value, "float32")) if not isinstance(value, (Tensor, Variable)) else cast(value, "float32")


def _step(step, dtype):
    step = step if isinstance(step, (Tensor, Variable)) else Tensor(to_array(step))
    return cast(step, dtype)


def _positive_steps(name, value):
    if value <= 0:
        raise ValueError(f"Argument `{name}` must be > 0. Received: {name}={value}")


class LearningRateSchedule:
    """Base class: implement ``__call__(step)`` returning the learning rate, and ``get_config``."""

    def __call__(self, step):
        raise NotImplementedError(f"Learning rate schedule '{self.__class__.__name__}' must override "
                                  "`__call__(self, step)`.")

    def get_config(self):
        raise NotImplementedError(f"Learning rate schedule '{self.__class__.__name__}' must override "
                                  "`get_config()` in order to be serializable.")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class _StepDecay(LearningRateSchedule):
    """A decay driven by ``p = step / decay_steps`` (floored with ``staircase``): subclasses give
    ``_rate(lr, p)``."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        _positive_steps("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name or self.__class__.__name__

    def __call__(self, step):
        lr = _float(self.initial_learning_rate)
        p = _step(step, lr.dtype) / float(self.decay_steps)
        return self._rate(lr, floor(p) if self.staircase else p)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_StepDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``; with ``staircase`` the
    exponent is floored, so the rate drops every ``decay_steps`` steps."""

    def _rate(self, lr, p):
        return lr * pow(_float(self.decay_rate), p)


class InverseTimeDecay(_StepDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (floored with ``staircase``)."""

    def _rate(self, lr, p):
        return lr / (1.0 + float(self.decay_rate) * p)


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < step <= boundaries[i]``, and ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(f"The length of boundaries should be 1 less than the length of values. Received: "
                             f"boundaries={boundaries} of length {len(boundaries)}, and values={values} of length "
                             f"{len(values)}.")
        if any(b >= c for b, c in zip(boundaries, boundaries[1:])):
            raise ValueError(f"`boundaries` must be strictly increasing. Received: boundaries={boundaries}")
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def __call__(self, step):
        step = step if isinstance(step, (Tensor, Variable)) else Tensor(to_array(step))
        values = [_float(v) for v in self.values]
        boundaries = [cast(Tensor(to_array(b)), step.dtype) for b in self.boundaries]
        result = values[0] * cast(step <= boundaries[0], "float32")
        result = result + values[-1] * cast(step > boundaries[-1], "float32")
        for low, high, value in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            result = result + value * cast(logical_and(step > low, step <= high), "float32")
        return result

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """``(initial - end) * (1 - min(step, decay_steps) / decay_steps) ** power + end``; with
    ``cycle`` the decay restarts at each multiple of ``decay_steps``."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 name="PolynomialDecay"):
        _positive_steps("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step):
        lr = _float(self.initial_learning_rate)
        end = float(self.end_learning_rate)
        step = _step(step, lr.dtype)
        decay_steps = _float(self.decay_steps)
        if self.cycle:
            decay_steps = decay_steps * where(equal(step, 0.0), 1.0, ceil(step / decay_steps))
        else:
            step = minimum(step, decay_steps)
        return (lr - end) * pow(1.0 - step / decay_steps, _float(self.power)) + end

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from ``initial_learning_rate`` (or, after a linear warmup over ``warmup_steps``,
    from ``warmup_target``) to ``alpha`` times that over ``decay_steps``:
    ``lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)``."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0):
        _positive_steps("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_steps = warmup_steps
        self.warmup_target = warmup_target

    def _decay(self, step, decay_steps, decay_from):
        cosine = 0.5 * (1.0 + cos(math.pi * (step / decay_steps)))
        return decay_from * ((1.0 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        lr = _float(self.initial_learning_rate)
        decay_steps = _float(self.decay_steps)
        step = _step(step, lr.dtype)
        if self.warmup_target is None:
            return self._decay(minimum(step, decay_steps), decay_steps, lr)
        target = _float(self.warmup_target)
        warmup_steps = _float(self.warmup_steps)
        step = minimum(step, decay_steps + warmup_steps)
        in_warmup = step < warmup_steps
        # where() instead of cond: both branches are cheap scalars; the guard keeps 0/0 out.
        warmup = (target - lr) * (step / where(in_warmup, warmup_steps, 1.0)) + lr
        return where(in_warmup, warmup, self._decay(step - warmup_steps, decay_steps, target))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR, Loshchilov & Hutter 2016), Keras 3's formula: the
    first period lasts ``first_decay_steps``, each next one ``t_mul`` times longer and starts from
    ``m_mul`` times the previous start; within period ``i`` at fraction ``f`` of it the rate is
    ``lr * ((1 - alpha) * 0.5 * m_mul**i * (1 + cos(pi * f)) + alpha)``."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name="SGDRDecay"):
        if first_decay_steps <= 0:
            raise ValueError(f"Argument `first_decay_steps` must be > 0. Received: first_decay_steps="
                             f"{first_decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self.t_mul = t_mul
        self.m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step):
        lr = _float(self.initial_learning_rate)
        fraction = _step(step, lr.dtype) / _float(self.first_decay_steps)
        t_mul = _float(self.t_mul)
        if self.t_mul == 1.0:
            restart = floor(fraction)
            fraction = fraction - restart
        else:  # periods 1, t, t^2...: the i-th restart comes after (1 - t^i) / (1 - t) first periods
            restart = floor(log(1.0 - fraction * (1.0 - t_mul)) / log(t_mul))
            fraction = (fraction - (1.0 - pow(t_mul, restart)) / (1.0 - t_mul)) / pow(t_mul, restart)
        cosine = 0.5 * pow(_float(self.m_mul), restart) * (1.0 + cos(math.pi * fraction))
        return lr * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "first_decay_steps": self.first_decay_steps,
                "t_mul": self.t_mul, "m_mul": self.m_mul, "alpha": self.alpha, "name": self.name}


_SCHEDULES = {cls.__name__: cls for cls in (ExponentialDecay, InverseTimeDecay, PiecewiseConstantDecay,
                                           PolynomialDecay, CosineDecay,
                                           CosineDecayRestarts)}


def serialize(learning_rate_schedule):
    """``{'module', 'class_name', 'config', 'registered_name'}`` for a schedule."""
    return {"module": "minikeras.optimizers.schedules", "class_name": learning_rate_schedule.__class__.__name__,
            "config": learning_rate_schedule.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """Rebuilds a schedule from ``serialize``'s dict."""
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _SCHEDULES.get(name)
    if cls is None:
        raise ValueError(f"Unknown learning rate schedule {name!r}. Known schedules: {', '.join(sorted(_SCHEDULES))}")
    return cls.from_config(dict(config.get("config") or {}))

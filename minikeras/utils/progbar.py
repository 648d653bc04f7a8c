"""``Progbar``: Keras's progress bar for custom loops, drawn as ``fit``'s (a tqdm bar)."""
import time

from minikeras.callbacks.callback import print_msg
from minikeras.callbacks.interactive_logging import is_interactive_logging_enabled
from minikeras.callbacks.progbar import format_logs, open_bar


class Progbar:
    """A progress bar for a loop of known (or unknown) length, as ``keras.utils.Progbar``.

    Values passed to ``update``/``add`` are shown averaged over the steps seen (weighted by the
    steps each call advanced), except those named in ``stateful_metrics``, shown as given.

    Args:
      target: the total number of steps, or None if unknown.
      width: kept for Keras's signature (the bar fits the terminal).
      verbose: 1 draws a bar, 2 prints one line when the target is reached, 0 is silent.
      interval: kept for Keras's signature.
      stateful_metrics: names of values shown as given, not averaged.
      unit_name: the name of a step ('step', 'sample', ...).

    Example:
      >>> bar = Progbar(100)
      >>> for step in range(100):
      ...     bar.update(step + 1, values=[("loss", loss_of(step))])
    """

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None, unit_name="step"):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self._seen_so_far = 0
        self._values = {}  # name -> [weighted sum, weight], or [value, 1] for stateful metrics
        self._start = time.time()
        self._bar = open_bar(target, unit=unit_name) if verbose == 1 and is_interactive_logging_enabled() else None
        self._finalized = False

    def update(self, current, values=None, finalize=None):
        """Moves the bar to step ``current``.

        Args:
          current: the index of the current step (the number of steps done).
          values: a list of ``(name, value)`` pairs to show.
          finalize: whether this is the last update; None: when ``current`` reaches ``target``.
        """
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        advanced = current - self._seen_so_far
        for name, value in values or ():
            value = float(value)
            if name in self.stateful_metrics:
                self._values[name] = [value, 1]
            else:
                total, weight = self._values.get(name, [0.0, 0])
                self._values[name] = [total + value * max(advanced, 1), weight + max(advanced, 1)]
        self._seen_so_far = current
        if self._bar is not None:
            if self._values:
                self._bar.set_postfix_str(format_logs(self.averages(), ", ", "="), refresh=False)
            if advanced > 0:
                self._bar.update(advanced)
            if finalize:
                self._close()
        elif self.verbose and finalize and not self._finalized:  # verbose=2, or 1 with interactive logging off
            line = f"{current}/{self.target or current} - {time.time() - self._start:.0f}s"
            if self._values:
                line += " - " + format_logs(self.averages())
            print_msg(line)
        self._finalized = self._finalized or finalize

    def add(self, n, values=None):
        """Advances the bar by ``n`` steps."""
        self.update(self._seen_so_far + n, values)

    def averages(self):
        """The values as shown: ``{name: average}`` (the last value of stateful metrics)."""
        return {name: total / max(weight, 1) for name, (total, weight) in self._values.items()}

    def _close(self):
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.close()

    def __del__(self):
        self._close()

"""How many steps an epoch runs and which batches they take: Keras 3's ``EpochIterator`` rule.

Without ``steps_per_epoch`` every epoch is one pass over the data. With it, a pass over the
data goes on from one epoch to the next (5 batches, 2 steps an epoch: epochs take batches
[0 1], [2 3], [4], [0 1], ...; an epoch that reaches the end of the data stops there with a
warning) and the next pass starts with the next epoch. Nothing wraps around within an epoch:
``steps_per_epoch`` larger than the data runs the batches there are, warns and goes on with
the next epoch, as Keras does. With ``steps_per_execution`` (groups of ``size`` steps) Keras
counts a whole group as seen even when the data ends inside it; so does this module.
"""
import itertools
import warnings

RAN_OUT = ("Your input ran out of data; interrupting training. Make sure that your dataset or generator can "
           "generate at least `steps_per_epoch * epochs` batches. You may need to use the `.repeat()` function "
           "when building your dataset.")


def warn_ran_out():
    """Keras's warning (its text and category) for an epoch cut short by the end of the data."""
    warnings.warn(RAN_OUT, UserWarning, stacklevel=4)


class Passes:
    """Keras's epoch schedule over passes of data.

    Args:
      steps_per_epoch: the user's ``steps_per_epoch`` / ``steps``, or None (one pass an epoch).
      num_batches: the batches in one pass, or None when unknown (a Dataset of unknown length:
        learned, as Keras does, when a pass first runs out).
    """

    def __init__(self, steps_per_epoch, num_batches):
        self.steps_per_epoch = steps_per_epoch
        self.num_batches = num_batches
        self._take = None  # the current pass: take(count) -> up to count batches, [] at its end
        self._seen = 0  # steps counted on the current pass (whole groups, as Keras counts)
        self._passes = 0  # passes started

    def epoch(self, size, new_pass):
        """Yields this epoch's groups of up to ``size`` batches, each one ``take(size)``'s
        result, ``take = new_pass()`` being called when a pass of the data starts."""
        if self._take is None or self.steps_per_epoch is None:
            self._take, self._seen = new_pass(), 0
            self._passes += 1
        length = self.steps_per_epoch or self.num_batches
        for _ in (range(0, length, size) if length else itertools.count()):
            if self.num_batches is not None and self._seen >= self.num_batches:
                if self.steps_per_epoch:
                    warn_ran_out()
                break
            self._seen += size
            group = self._take(size)
            if not len(group):  # a Dataset of unknown length ended
                if self.num_batches is None:
                    self.num_batches = self._seen
                if self.steps_per_epoch or (self._seen == size and self._passes > 1):
                    warn_ran_out()  # (a later pass that gives nothing: a Python generator is used up)
                self._take = None
                return
            yield group
        if self.num_batches is not None and self._seen >= self.num_batches:
            self._take = None

"""Summary writers (``mk.summary.create_file_writer``): event files that TensorBoard reads, written
with the ``tensorboard`` package's ``EventFileWriter`` and protobufs (the optional extra
``minikeras[tensorboard]``), and the default writer, step and recording condition that
``mk.summary.scalar`` & co. use, as in TF 2.
"""
import contextlib
import os
import time

from minikeras.tensor import Tensor, Variable


def tensorboard_modules():
    """``(event_pb2, summary_pb2, EventFileWriter)`` from the ``tensorboard`` package, or an
    ImportError that names the extra to install."""
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as error:
        raise ImportError("mk.summary and mk.callbacks.TensorBoard write TensorBoard event files with the "
                          "`tensorboard` package, which is not installed: pip install 'minikeras[tensorboard]' (or "
                          "pip install tensorboard)") from error
    return event_pb2, summary_pb2, EventFileWriter


class _State:
    """What the summary functions write to: the default writer, step and recording condition."""

    def __init__(self):
        self.writer = None
        self.step = None
        self.record = True


_STATE = _State()


def step_value(step):
    """``step`` (an int, a NumPy/mk scalar or a Variable such as ``optimizer.iterations``) as an int."""
    if isinstance(step, (Tensor, Variable)):
        step = step.numpy()
    return int(step)


class _DefaultWriter:
    """What every writer shares: making itself the default writer (and step) for a block or from now on.
    Subclasses give ``write``, ``flush`` and ``close``."""

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Makes this the default writer (and ``step``, when given, the default step) inside the block;
        flushes at its end."""
        previous = (_STATE.writer, _STATE.step)
        _STATE.writer = self
        if step is not None:
            _STATE.step = step
        try:
            yield self
        finally:
            self.flush()
            _STATE.writer, _STATE.step = previous

    def set_as_default(self, step=None):
        """Makes this the default writer from now on (and ``step`` the default step)."""
        _STATE.writer = self
        if step is not None:
            _STATE.step = step


class SummaryWriter(_DefaultWriter):
    """Writes summaries to one event file in ``logdir`` (``events.out.tfevents.<time>.<host>...v2``,
    as TF names them). Use it as the default writer with ``with writer.as_default(step):``."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self._logdir = os.fspath(logdir)
        self._max_queue = 10 if max_queue is None else max_queue
        self._flush_secs = 120 if flush_millis is None else flush_millis / 1000
        self._suffix = ".v2" if filename_suffix is None else filename_suffix
        self._file = None
        self.init()

    def init(self):
        """Opens the event file (done by the constructor; again after ``close``)."""
        if self._file is None:
            _, _, EventFileWriter = tensorboard_modules()
            os.makedirs(self._logdir, exist_ok=True)
            self._file = EventFileWriter(self._logdir, max_queue_size=self._max_queue, flush_secs=self._flush_secs,
                                         filename_suffix=self._suffix)

    @property
    def logdir(self):
        return self._logdir

    def write(self, summary, step):
        """Appends one ``Summary`` protobuf at ``step`` (an Event with the wall time)."""
        event_pb2, _, _ = tensorboard_modules()
        self.init()
        self._file.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary))

    def flush(self):
        """Writes what is queued to disk."""
        if self._file is not None:
            self._file.flush()

    def close(self):
        """Flushes and closes the file; a later write opens a new one."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __repr__(self):
        return f"<SummaryWriter logdir={self._logdir!r}>"


class NoopSummaryWriter(_DefaultWriter):
    """A writer that writes nothing (``mk.summary.create_noop_writer``)."""

    def write(self, summary, step):
        pass

    def flush(self):
        pass

    def close(self):
        pass


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None):
    """A SummaryWriter for ``logdir`` (created if missing), as ``tf.summary.create_file_writer``.

    Args:
      logdir: the directory of the event file.
      max_queue: events kept in memory before a write (10).
      flush_millis: the longest time between flushes (120,000 ms).
      filename_suffix: appended to the event file's name ('.v2', as TF 2).

    >>> writer = mk.summary.create_file_writer("logs/run1")
    >>> with writer.as_default(step=3):
    ...     mk.summary.scalar("loss", 0.25)
    True
    """
    del name  # TF's op name: nothing to name here
    return SummaryWriter(logdir, max_queue=max_queue, flush_millis=flush_millis, filename_suffix=filename_suffix)


def create_noop_writer():
    """A writer that writes nothing: the summaries in its ``as_default`` block return True and are dropped."""
    return NoopSummaryWriter()


def flush(writer=None):
    """Flushes ``writer`` (default: the default writer)."""
    writer = writer if writer is not None else _STATE.writer
    if writer is not None:
        writer.flush()


@contextlib.contextmanager
def record_if(condition):
    """Writes summaries in the block only when ``condition`` (a bool, or a function of no
    arguments returning one, asked at each write) holds."""
    previous = _STATE.record
    _STATE.record = condition
    try:
        yield
    finally:
        _STATE.record = previous


def should_record_summaries():
    """Whether a summary written now would be written: a default writer is set and the
    ``record_if`` condition holds."""
    if _STATE.writer is None:
        return False
    condition = _STATE.record
    return bool(condition() if callable(condition) else condition)


def set_step(step):
    """Sets the default step (``mk.summary.experimental.set_step``)."""
    _STATE.step = step


def get_step():
    """The default step, or None."""
    return _STATE.step


def default_writer():
    return _STATE.writer


def resolve_step(step):
    """``step`` or the default step as an int; TF's ValueError when neither is set."""
    if step is None:
        step = _STATE.step
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument or through "
                         "mk.summary.experimental.set_step()")
    return step_value(step)

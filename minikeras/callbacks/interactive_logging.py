"""Keras 3's interactive-logging switch (``keras.config.disable_interactive_logging()``).

On (the default), progress bars are drawn and messages printed to stdout. Off, for jobs whose
output is a log file, no bar is drawn: a ``verbose=1`` run prints one line per epoch as
``verbose=2`` does, and every message (those lines, callbacks' messages) goes to the
``logging`` logger ``"minikeras"`` at INFO level instead of stdout, as Keras sends them to
absl's logging.
"""
import logging

_state = {"enabled": True}
logger = logging.getLogger("minikeras")


def enable_interactive_logging():
    """Draws progress bars and prints messages to stdout (the default)."""
    _state["enabled"] = True


def disable_interactive_logging():
    """Sends messages to the ``"minikeras"`` logger and draws no progress bars."""
    _state["enabled"] = False


def is_interactive_logging_enabled():
    """Whether progress bars are drawn and messages printed to stdout."""
    return _state["enabled"]

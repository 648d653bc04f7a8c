"""Compiled programs: ``mk.function`` (``function``), tracing a function once (``trace``), calling
the result (``program``), signatures with None sizes (``signatures``, ``general``)."""

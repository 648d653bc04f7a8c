"""Compiled programs: ``mk.function`` (``function``), tracing a function once (``trace``), calling
the result (``program``), the programs of a function found and kept by signature
(``program_cache``), signatures with None sizes (``signatures``)."""

"""Compiled programs: tracing a function once (``trace``) and calling the result (``program``)."""

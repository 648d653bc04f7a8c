"""Trainers: what ``compile``/``fit``/``evaluate``/``predict`` run on a model.

As in Keras 3, the model classes live in ``minikeras.models`` and what trains them lives
here: ``trainer`` (the ``Trainer`` mixin of ``Model``), ``data_adapter`` (arrays, Datasets and
generators into batches), ``step_runner`` (fit's per-batch calls of the compiled step),
``multi_step`` (``steps_per_execution`` as one scan), ``output_losses`` (per-output losses and
metrics), ``class_weight``, ``label_check`` (sparse labels checked once per fit/evaluate),
``input_cast`` (integer arrays to a float model cast to its Input dtype) and ``logs`` (what
callbacks are handed).
"""

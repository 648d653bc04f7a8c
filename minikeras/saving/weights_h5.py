"""Keras 3's ``.weights.h5`` layout: writing it, and reading it into a model.

    /vars                      attrs: name=<model name>     (the model's own variables)
    /layers/dense/vars/0, 1    attrs: name='dense'          (kernel, bias)
    /layers/dense_1/vars/...   the second Dense, ...
    /layers/flatten/vars       (no datasets)
    /optimizer/vars/0..M       attrs: name='adam'           (iterations, learning_rate, slots)
    /seed_generator/vars/0     the random generator's state (see ``random_state``)

No metric state, as Keras 3 writes none (``_walk``'s optional entries); a file that has it
(written by an older minikeras) restores it.

Datasets hold the arrays as they are (float32, int32, ...); bfloat16 is stored as 2-byte
opaque data with ``attrs['dtype'] = 'bfloat16'``, as Keras does.

An object whose class overrides Keras 3's ``save_own_variables(store)`` fills its group itself
(``store[name] = array``: its numbered variables, often through ``super()``, and arrays of its
own such as ``/layers/string_lookup/vars/idf_weights`` of a 'tf_idf' lookup); one that overrides
``load_own_variables(store)`` is handed its whole group as a dict of arrays when a file is read.
Other objects (Layer's defaults, optimizers) get their numbered variables written and read here,
with the checks below.
"""
import warnings

import numpy as np

from minikeras.module import overrides_default, snake_case
from minikeras.saving import random_state
from minikeras.saving._walk import Entry, entries, optimizer_entry

BFLOAT16 = "bfloat16"


def write(h5file, model):
    """Writes every entry of ``model`` (and its optimizer, if built) into an open h5py File."""
    all_entries = [e for e in entries(model) if not e.optional]
    optimizer = optimizer_entry(model)
    if optimizer is not None and getattr(optimizer.owner, "built", True):
        all_entries.append(optimizer)
        inner = getattr(optimizer.owner, "inner_optimizer", None)
        if inner is not None:  # a LossScaleOptimizer: Keras 3 also files the inner one's variables on their own
            all_entries.append(Entry("optimizer/inner_optimizer", inner, list(inner.variables)))
        used = {}  # a MultiOptimizer: each sub-optimizer too, named by class as Keras names a list's items
        for sub in getattr(optimizer.owner, "optimizers", ()):
            name = snake_case(type(sub).__name__)
            used[name] = used.get(name, -1) + 1
            name = f"{name}_{used[name]}" if used[name] else name
            all_entries.append(Entry(f"optimizer/optimizers/{name}", sub, list(sub.variables)))
    for entry in all_entries:
        group = h5file.create_group(entry.group_name)
        group.attrs["name"] = entry.name
        if overrides_default(entry.owner, "save_own_variables"):
            store = {}
            entry.owner.save_own_variables(store)
            arrays = store.items()
        else:
            arrays = ((str(i), variable) for i, variable in enumerate(entry.variables))
        for name, value in arrays:
            value = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
            dataset = group.create_dataset(str(name), data=value)
            if value.dtype.name == BFLOAT16:
                dataset.attrs["dtype"] = BFLOAT16
    random_state.write(h5file, model)


def is_keras3_layout(h5file):
    return "vars" in h5file or "layers" in h5file or "_layer_checkpoint_dependencies" in h5file


def read_array(dataset):
    value = dataset[()]
    if dataset.attrs.get("dtype") in (BFLOAT16, BFLOAT16.encode()):
        import ml_dtypes
        value = np.asarray(value).view(ml_dtypes.bfloat16)
    return np.asarray(value)


class Mismatch(ValueError):
    pass


class OwnArrays:
    """The target of an object's named arrays (``load_own_variables``), assigned as a Variable is:
    ``OwnArrays(owner).assign({name: array})``."""

    def __init__(self, owner):
        self.owner = owner

    def assign(self, store):
        self.owner.load_own_variables(store)


class Loader:
    """Matches a file's groups with a model's entries; collects (variable, array) pairs."""

    def __init__(self, h5file, model, filename, skip_mismatch):
        self.file, self.model, self.filename, self.skip_mismatch = h5file, model, filename, skip_mismatch
        self.assignments = []
        self.used_groups = set()

    def problem(self, message):
        message = f"{message} (file '{self.filename}')"
        if not self.skip_mismatch:
            raise Mismatch(message)
        warnings.warn(f"Skipping: {message}", stacklevel=4)

    def _group(self, entry, fallbacks):
        for path in (entry.group_name, fallbacks.get(id(entry.owner))):
            if path is None:
                continue
            for candidate in (path, path.replace("layers", "_layer_checkpoint_dependencies", 1)):
                if candidate in self.file:
                    return self.file[candidate]
        return None

    def load_entry(self, entry, group):
        variables = entry.variables
        if group is not None and overrides_default(entry.owner, "load_own_variables"):
            self.used_groups.add(group.name.lstrip("/"))  # the object's own method reads its whole group
            self.assignments.append((OwnArrays(entry.owner), {k: read_array(group[k]) for k in group.keys()}))
            return None
        count = len(group) if group is not None else 0
        if group is not None:
            self.used_groups.add(group.name.lstrip("/"))
            expected_names = {str(i) for i in range(count)}
            if set(group.keys()) != expected_names:
                raise ValueError(f"Unexpected datasets {sorted(group.keys())} in group '{group.name}' of "
                                 f"'{self.filename}': a Keras weights file numbers them 0..{count - 1}")
        if count != len(variables):
            hint = " (is the layer built?)" if not variables else ""
            where = f"'{group.name}'" if group is not None else f"no group '{entry.group_name}'"
            return self.problem(
                f"{entry.describe()} has {len(variables)} variables {[v.path for v in variables]}{hint}, but the file "
                f"has {count} at {where}")
        pairs = []
        for i, variable in enumerate(variables):
            dataset = group[str(i)]
            if tuple(dataset.shape) != tuple(variable.shape):
                return self.problem(
                    f"Shape mismatch in {entry.describe()} for weight '{variable.path}': the model expects shape "
                    f"{tuple(variable.shape)}, '{dataset.name}' in the file has shape {tuple(dataset.shape)}")
            pairs.append((variable, read_array(dataset)))
        self.assignments.extend(pairs)

    def load_model_entries(self):
        model_entries = entries(self.model)
        keras_paths = {id(e.owner): e.group_name for e in entries(self.model, keras_subclass_paths=True)}
        for entry in model_entries:
            group = self._group(entry, keras_paths)
            if group is None and entry.optional:
                continue  # no metric state in the file: the metric keeps its own
            self.load_entry(entry, group)
        self._check_unused_layer_groups(model_entries)

    def _check_unused_layer_groups(self, model_entries):
        unused = []

        def visit(name, obj):
            if name.endswith("/vars") and len(obj) and name not in self.used_groups:
                unused.append(name)

        for top in ("layers", "_layer_checkpoint_dependencies"):
            if top in self.file:
                self.file[top].visititems(lambda name, obj, top=top: visit(f"{top}/{name}", obj))
        if unused:
            with_weights = [e.group_name for e in model_entries if e.variables]
            self.problem(f"The file has weights in {unused} that no layer of model '{self.model.name}' matches; "
                         f"the model's layers with weights are {with_weights}")

    def load_optimizer(self):
        entry = optimizer_entry(self.model)
        group = self.file.get("optimizer/vars")
        if entry is None or group is None or not len(group):
            return
        optimizer = entry.owner
        unbuilt_file = len(group) == len(entry.variables)  # saved before its first step: iterations, lr
        if not getattr(optimizer, "built", True) and hasattr(optimizer, "build") and not unbuilt_file:
            optimizer.build(self.model.trainable_variables)
            entry = optimizer_entry(self.model)
        if len(entry.variables) != len(group):
            warnings.warn(f"Skipping variable loading for optimizer '{entry.name}', because it has "
                          f"{len(entry.variables)} variables whereas the saved optimizer in '{self.filename}' has "
                          f"{len(group)} variables.", stacklevel=4)
            return
        self.load_entry(entry, group)


def read(h5file, model, filename, skip_mismatch):
    """Validates the whole file against ``model``; returns the (variable, array) pairs and a
    ``restore(model)`` for the file's random state (see ``random_state``), to apply after them."""
    loader = Loader(h5file, model, filename, skip_mismatch)
    loader.load_model_entries()
    loader.load_optimizer()
    return loader.assignments, random_state.read(h5file, filename)

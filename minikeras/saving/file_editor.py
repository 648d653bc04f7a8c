"""``KerasFileEditor``: inspect, compare, edit and resave the weights of a ``.keras`` or
``.weights.h5`` file, as Keras 3's ``keras.saving.KerasFileEditor``.

The weights are a nested dict mirroring the file: each object's ``vars`` group is collapsed
into the object (``{"layers": {"dense": {"0": kernel, "1": bias}}}``); empty groups are left out.
"""
import io
import json
import zipfile

import h5py
import numpy as np

from minikeras.saving._walk import entries, optimizer_entry

_WEIGHTS_NAME = "model.weights.h5"


def _read_group(group, path=""):
    tree = {}
    for key in group:
        link = group.get(key, getclass=True, getlink=True)
        if link in (h5py.ExternalLink, h5py.SoftLink):
            raise ValueError(f"Not allowed: H5 file with {link.__name__} at {path}/{key}")
        value = group[key]
        if isinstance(value, h5py.Group):
            if "vars" in value:
                value = value["vars"]
            if len(value):
                child = _read_group(value, f"{path}/{key}")
                if child:
                    tree[key] = child
        elif isinstance(value, h5py.Dataset):
            if value.external or value.is_virtual:
                raise ValueError(f"Not allowed: H5 file with an external or virtual Dataset at {path}/{key}")
            tree[key] = value[()]
    return tree


def _model_spec(model):
    """The model's weights as the file would hold them: a nested dict of arrays' shapes."""
    spec = {}
    found = [e for e in entries(model) if not e.optional]
    optimizer = optimizer_entry(model)
    if optimizer is not None and getattr(optimizer.owner, "built", True):
        found.append(optimizer)
    for entry in found:
        if not entry.variables:
            continue
        node = spec
        for part in [p for p in entry.path.split("/") if p]:
            node = node.setdefault(part, {})
        for i, variable in enumerate(entry.variables):
            node[str(i)] = tuple(variable.shape)
    return spec


def _check_weights_dict(weights):
    if not isinstance(weights, dict):
        raise ValueError("Argument `weights` should be a dict where keys are weight names (usually '0', '1', etc.) "
                         f"and values are NumPy arrays. Received: type(weights)={type(weights)}")


class KerasFileEditor:
    """Inspects and edits the weights of a saved model (``mk.saving.KerasFileEditor``).

    Args:
      filepath: a ``.keras`` or ``.weights.h5`` file.

    Example::

        editor = mk.saving.KerasFileEditor("model.keras")
        editor.summary()
        editor.rename_object("dense_3", "dense_2")
        editor.delete_object("layers/dense_4")
        editor.add_object("layers/dense_5", weights={"0": kernel, "1": bias})
        editor.compare(new_model)       # {'status': 'success', 'error_count': 0, 'match_count': ...}
        editor.save("edited.weights.h5")
        new_model.load_weights("edited.weights.h5")

    Attributes:
      weights_dict: the nested dict of weights (edit it directly, or with the methods).
      config, metadata: a ``.keras`` file's ``config.json`` and ``metadata.json`` (else None).

    Raises:
      ValueError: for another extension, or a file with links to other files.
    """

    def __init__(self, filepath):
        self.filepath = filepath = str(filepath)
        self.config = self.metadata = None
        if filepath.endswith(".keras"):
            with zipfile.ZipFile(filepath) as archive:
                self.config = json.loads(archive.read("config.json"))
                names = archive.namelist()
                self.metadata = json.loads(archive.read("metadata.json")) if "metadata.json" in names else None
                raw = archive.read(_WEIGHTS_NAME) if _WEIGHTS_NAME in names else None
            source = io.BytesIO(raw) if raw is not None else None
        elif filepath.endswith(".weights.h5"):
            source = filepath
        else:
            raise ValueError(f"Invalid filename: expected a `.keras` `.weights.h5` extension. Received: "
                             f"filepath={filepath}")
        self.weights_dict = {}
        if source is not None:
            with h5py.File(source, "r") as h5file:
                self.weights_dict = _read_group(h5file)
        print(f"Keras model file '{self.filepath}'")

    def summary(self):
        """Prints the weights' structure: each object, then its weights' shapes and dtypes."""
        print("\n".join(self._summary_lines(self.weights_dict, 0)))

    def _summary_lines(self, tree, depth):
        lines = []
        for key, value in tree.items():
            if isinstance(value, dict):
                lines.append("  " * depth + f"...{key}")
                lines.extend(self._summary_lines(value, depth + 1))
            else:
                lines.append("  " * depth + f"...{key}: shape={value.shape}, dtype={value.dtype}")
        return lines

    def compare(self, reference_model):
        """Lists every mismatch between the file and ``reference_model``'s weights.

        Returns:
          ``{'status': 'success' or 'error', 'error_count': int, 'match_count': int}``: an error
          per object or weight missing on one side and per shape mismatch.
        """
        print("Running comparison")
        spec = _model_spec(reference_model)
        checked = set()
        errors, matches = self._compare(self.weights_dict, spec, "", "saved file", "reference model", checked)
        more, _ = self._compare(spec, self.weights_dict, "", "reference model", "saved file", checked)
        errors += more
        if errors == 0:
            print("Comparison successful: saved file is compatible with the reference model\n"
                  f"    Found {matches} matching weight{'' if matches == 1 else 's'}")
        else:
            print(f"Found {errors} error{'' if errors == 1 else 's'}: saved file is not compatible with the reference "
                  "model")
        return {"status": "success" if errors == 0 else "error", "error_count": errors, "match_count": matches}

    def _compare(self, target, reference, base, target_name, ref_name, checked):
        errors = matches = 0
        for key, ref_value in reference.items():
            path = f"{base}/{key}"
            if path in checked:
                continue
            if key not in target:
                errors += 1
                checked.add(path)
                kind = "Object" if isinstance(ref_value, dict) else "Weight"
                print(f"...{kind} {path} present in {ref_name}, missing from {target_name}")
            elif isinstance(ref_value, dict):
                sub_errors, sub_matches = self._compare(target[key], ref_value, path, target_name, ref_name, checked)
                errors += sub_errors
                matches += sub_matches
            elif _shape(target[key]) != _shape(ref_value):
                errors += 1
                checked.add(path)
                print(f"...Weight shape mismatch for {path}\n    In {ref_name}: shape={_shape(ref_value)}\n"
                      f"    In {target_name}: shape={_shape(target[key])}")
            else:
                matches += 1
        return errors, matches

    # -- edits ------------------------------------------------------------------------------------
    def _edit_object(self, edit, source_name, target_name=None):
        if target_name is not None and "/" in target_name:
            raise ValueError(f"Argument `target_name` should be a leaf name, not a full path name. Received: "
                             f"target_name='{target_name}'")
        if "/" in source_name:
            parts = source_name.split("/")
            node = self.weights_dict
            for part in parts[:-1]:
                if part not in node:
                    raise ValueError(f"Path '{source_name}' not found in model.")
                node = node[part]
            if parts[-1] not in node:
                raise ValueError(f"Path '{source_name}' not found in model.")
            edit(node, parts[-1], target_name)
            return
        holders = []

        def find(node):
            for value in node.values():
                if isinstance(value, dict):
                    find(value)
            if source_name in node:
                holders.append(node)
        find(self.weights_dict)
        if len(holders) > 1:
            raise ValueError(f"Name '{source_name}' occurs more than once in the model; try passing a complete path")
        if not holders:
            raise ValueError(f"Source name '{source_name}' does not appear in the model. Use `editor.summary()` to "
                             "list all objects.")
        edit(holders[0], source_name, target_name)

    def rename_object(self, object_name, new_name):
        """Renames an object (a name such as ``"dense_2"`` found once, or a path such as
        ``"layers/dense_2"``) to the leaf name ``new_name``."""
        def rename(node, source, target):
            node[target] = node.pop(source)
        self._edit_object(rename, object_name, new_name)

    def delete_object(self, object_name):
        """Removes an object (a name found once, or a path) and its weights."""
        self._edit_object(lambda node, source, target: node.pop(source), object_name)

    def add_object(self, object_path, weights):
        """Adds an object at ``object_path`` (its parent must exist) with ``weights``, a dict
        ``{"0": array, "1": array, ...}``."""
        _check_weights_dict(weights)
        parts = object_path.split("/")
        node = self.weights_dict
        for part in parts[:-1]:
            if part not in node:
                raise ValueError(f"Path '{'/'.join(parts[:-1])}' not found in model.")
            node = node[part]
        node[parts[-1]] = {str(k): np.asarray(v) for k, v in weights.items()}

    def delete_weight(self, object_name, weight_name):
        """Removes the weight ``weight_name`` (e.g. ``"1"``) of an object."""
        def delete(node, source, target):
            if weight_name not in node[source]:
                raise ValueError(f"Weight {weight_name} not found in object {object_name}. Weights found: "
                                 f"{list(node[source].keys())}")
            node[source].pop(weight_name)
        self._edit_object(delete, object_name)

    def add_weights(self, object_name, weights):
        """Adds (or replaces) weights of an existing object: ``{"2": array, ...}``."""
        _check_weights_dict(weights)
        self._edit_object(lambda node, source, target: node[source].update(
            {str(k): np.asarray(v) for k, v in weights.items()}), object_name)

    def save(self, filepath):
        """Writes the edited weights to a ``.weights.h5`` file (Keras 3's layout: each object's
        arrays in its ``vars`` group), for ``model.load_weights``."""
        filepath = str(filepath)
        if not filepath.endswith(".weights.h5"):
            raise ValueError(f"Invalid `filepath` argument: expected a `.weights.h5` extension. Received: "
                             f"filepath={filepath}")
        with h5py.File(filepath, "w") as h5file:
            _write_group(h5file, self.weights_dict, "")

    resave_weights = save  # Keras's older name


def _write_group(h5file, tree, path):
    arrays = {k: v for k, v in tree.items() if not isinstance(v, dict)}
    if arrays:
        group = h5file.create_group(f"{path}/vars" if path else "vars")
        for name, value in arrays.items():
            group.create_dataset(name, data=np.asarray(value))
    for name, value in tree.items():
        if isinstance(value, dict) and value:
            _write_group(h5file, value, f"{path}/{name}" if path else name)


def _shape(value):
    return value if isinstance(value, tuple) else tuple(np.shape(value))

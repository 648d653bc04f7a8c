"""The ``assets/`` part of a ``.keras`` file: files a layer writes besides its weights (a lookup
layer's ``vocabulary.txt``), as Keras 3's ``save_assets`` / ``load_assets`` lay them out.

Each object found by ``_walk.entries`` that has ``save_assets(dir)`` writes its files into a
folder of its own; in the archive they sit under ``assets/<its path>/`` (for example
``assets/layers/text_vectorization/vocabulary.txt``). On loading, each such object with
``load_assets(dir)`` is handed a folder holding its files. Nothing is written when no object has
assets.
"""
import os
import tempfile

from minikeras.saving._walk import entries

PREFIX = "assets/"
MAX_ASSET_BYTES = 256 << 20


def members(model):
    """``{archive name: bytes}`` of the assets the model's objects write."""
    out = {}
    for entry in entries(model):
        save = getattr(entry.owner, "save_assets", None)
        if save is None:
            continue
        with tempfile.TemporaryDirectory() as folder:
            save(folder)
            for root, _, files in os.walk(folder):
                for name in sorted(files):
                    full = os.path.join(root, name)
                    relative = os.path.relpath(full, folder).replace(os.sep, "/")
                    with open(full, "rb") as f:
                        out[f"{PREFIX}{entry.path}/{relative}" if entry.path else f"{PREFIX}{relative}"] = f.read()
    return out


def load(model, archive, path):
    """Hands each object with ``load_assets`` the files stored under its path in ``archive``."""
    names = [n for n in archive.namelist() if n.startswith(PREFIX) and not n.endswith("/")]
    for entry in entries(model):
        loader = getattr(entry.owner, "load_assets", None)
        if loader is None:
            continue
        prefix = f"{PREFIX}{entry.path}/" if entry.path else PREFIX
        own = [n for n in names if n.startswith(prefix) and "/" not in n[len(prefix):]]
        with tempfile.TemporaryDirectory() as folder:
            for name in own:
                info = archive.getinfo(name)
                if info.file_size > MAX_ASSET_BYTES:
                    raise ValueError(f"Cannot load '{path}': its asset '{name}' is {info.file_size} bytes once "
                                     f"decompressed, more than {MAX_ASSET_BYTES}")
                with open(os.path.join(folder, name[len(prefix):]), "wb") as f:
                    f.write(archive.read(name))
            loader(folder)

"""Where the single-file datasets (Keras's ``get_file`` datasets) come from.

Each of ``cifar10``, ``cifar100``, ``imdb``, ``reuters``, ``boston_housing`` and
``california_housing`` is one file (or two: a word index beside the data), named as
Keras names it. ``dataset_file`` finds it, in this order:

1. ``path`` when it holds a directory separator: that file, and nothing else is tried;
2. ``$MINIKERAS_DATASETS/<dataset>/<name>``;
3. the cache ``$MINIKERAS_HOME/datasets/<dataset>/<name>`` (``MINIKERAS_HOME``
   defaults to ``~/.minikeras``);
4. a download into that cache from ``mirrors``, else ``$MINIKERAS_MIRRORS``, else
   ``_source.MIRRORS[dataset]`` (Keras's origin), checked against
   ``_source.SHA256[dataset][origin name]``: a sha256, or an md5 where Keras publishes
   one (32 hex digits, as Keras's ``get_file`` tells them apart).

``<name>`` is ``path`` when given as a bare file name (Keras's ``path``: the name the
file has in the cache), else the origin's file name.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from . import _source
from .download import DownloadError, fetch_url


def dataset_file(
    dataset: str,
    origin_name: str,
    path: str | os.PathLike | None = None,
    *,
    mirrors: Sequence[str] | None = None,
    progress: bool | None = None,
) -> Path:
    """Return the local path of ``dataset``'s file ``origin_name``, downloading it if needed.

    Args:
        dataset: the ``keras.datasets`` module name, e.g. ``"imdb"``.
        origin_name: the file's name at Keras's origin, e.g. ``"imdb.npz"``.
        path: a bare file name (the name in ``$MINIKERAS_DATASETS/<dataset>/`` and the
            cache), or a path to the file itself.
        mirrors: base URLs overriding ``$MINIKERAS_MIRRORS`` and Keras's origin.
        progress: a progress bar for downloads; ``None`` means only on a terminal.

    Raises:
        FileNotFoundError: ``path`` names a file that does not exist.
        DownloadError: the file is nowhere local and no mirror served it with its hash.
    """
    name = os.fspath(path) if path is not None else origin_name
    if os.sep in name or (os.altsep and os.altsep in name):
        file = Path(name).expanduser()
        if not file.is_file():
            raise FileNotFoundError(f"{dataset}: path={name!r} is not a file; expected the {origin_name} file "
                                    "or a bare file name to look up")
        return file
    looked = []
    env = os.environ.get("MINIKERAS_DATASETS")
    if env:
        file = Path(env).expanduser() / dataset / name
        if file.is_file():
            return file
        looked.append(f"$MINIKERAS_DATASETS/{dataset} ({file.parent}) lacks {name}")
    file = _source.data_home() / dataset / name
    if file.is_file():
        return file
    looked.append(f"the cache {file.parent} lacks {name}")
    expected = _source.SHA256[dataset][origin_name]
    algorithm = "md5" if len(expected) == 32 else "sha256"
    failures = []
    for base in _source.mirror_list(dataset, mirrors):
        url = (base if base.endswith("/") else base + "/") + origin_name
        print(f"Downloading {origin_name} from {url}", file=sys.stderr, flush=True)
        try:
            return fetch_url(url, file, expected, algorithm, progress=progress)
        except (OSError, ValueError) as err:
            failures.append((url, f"{type(err).__name__}: {err}"))
    tried = "\n".join(f"  {url}: {why}" for url, why in failures) or "  (no mirrors given)"
    raise DownloadError(
        f"{dataset}: {'; '.join(looked)}; and could not download {origin_name!r}; tried {len(failures)} "
        f"mirror(s):\n{tried}\nOffline? Put {name} in $MINIKERAS_DATASETS/{dataset}/ or pass "
        "load_data(path=<the file>).",
        failures,
    )

"""Download one file from a list of mirrors, verified by sha256, atomically.

The file is streamed into a temporary file next to its destination, hashed on
the way, and renamed into place (``os.replace``) only when the hash matches.
On any failure the temporary file is deleted and the next mirror is tried;
nothing half-written is ever left on disk, also on ``KeyboardInterrupt``; the
temp file of a process killed mid-download (``.<name>.<pid>.*.minikeras-partial``)
is removed by the next download into that folder.

Example:
    >>> download(
    ...     "t10k-labels-idx1-ubyte.gz",
    ...     ["https://ossci-datasets.s3.amazonaws.com/mnist/"],
    ...     "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    ...     "~/.minikeras/datasets/mnist",
    ... )
    PosixPath('/home/me/.minikeras/datasets/mnist/t10k-labels-idx1-ubyte.gz')
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from minikeras.saving import make_temp_file, remove_stale_temp_files

SCHEMES = ("http", "https", "file")
_CHUNK = 1 << 20


class DownloadError(OSError):
    """Every mirror failed. ``failures`` lists ``(url, reason)`` in the order tried."""

    def __init__(self, message: str, failures: Sequence[tuple[str, str]] = ()):
        super().__init__(message)
        self.failures = list(failures)

    def __str__(self) -> str:
        return self.args[0]


class ChecksumError(ValueError):
    """The downloaded bytes do not have the expected hash."""


def download(
    filename: str,
    mirrors: Sequence[str],
    sha256: str,
    dest_dir: str | os.PathLike,
    *,
    progress: bool | None = None,
    timeout: float = 10.0,
) -> Path:
    """Fetch ``filename`` from the first mirror that serves it with the right hash.

    Args:
        filename: file name appended to each mirror base URL; also the name
            the file gets in ``dest_dir``.
        mirrors: base URLs tried in order (``http://``, ``https://`` or
            ``file://``); a missing trailing ``/`` is added.
        sha256: expected hex digest of the file.
        dest_dir: directory to put the file in; created if missing. An existing
            file of that name is replaced only by a verified download.
        progress: show a tqdm progress bar; ``None`` means only when stderr is
            a terminal.
        timeout: seconds to wait for a connection, and for each read: a mirror
            that accepts connections but never answers fails after ``timeout``
            (default 10) and the next one is tried.

    Returns:
        Path of the verified file, ``dest_dir / filename``.

    Raises:
        DownloadError: no mirror gave the file with the right hash; the
            message lists each mirror and why it failed.
    """
    dest_dir = Path(dest_dir).expanduser()
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / filename
    remove_stale_temp_files(dest_dir)  # a download killed mid-file (kill -9) left its part there
    if progress is None:
        progress = sys.stderr.isatty()
    failures = []
    for base in mirrors:
        url = (base if base.endswith("/") else base + "/") + urllib.parse.quote(filename)
        print(f"Downloading {filename} from {url}", file=sys.stderr, flush=True)
        try:
            _fetch(url, dest, sha256.lower(), progress, timeout)
            return dest
        except (OSError, http.client.HTTPException, ValueError) as err:
            # URLError/HTTPError, timeouts and resets are OSError;
            # IncompleteRead is HTTPException; bad URLs and hashes are ValueError.
            failures.append((url, _reason(err)))
            if isinstance(err, urllib.error.HTTPError):
                err.close()  # an HTTPError holds the open response
    tried = "\n".join(f"  {url}: {why}" for url, why in failures) or "  (no mirrors given)"
    raise DownloadError(
        f"could not download {filename!r} into {dest_dir}; tried {len(failures)} mirror(s):\n"
        f"{tried}",
        failures,
    )


def sha256sum(path: str | os.PathLike) -> str:
    """Return the hex sha256 of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_url(url: str, dest: str | os.PathLike, file_hash: str | None = None, algorithm: str = "sha256", *,
              progress: bool | None = None, timeout: float = 10.0) -> Path:
    """Downloads one URL to ``dest`` as ``download`` does a mirror's file: streamed into a temp
    file, hashed on the way and renamed into place only when ``file_hash`` (hex, of
    ``algorithm``: 'sha256' or 'md5') matches, or always when ``file_hash`` is None.

    Raises:
        OSError: the URL could not be read (``urllib.error.URLError``, HTTP errors, timeouts).
        ChecksumError: the bytes do not have ``file_hash``; nothing is left at ``dest``.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files(dest.parent)
    if progress is None:
        progress = sys.stderr.isatty()
    _fetch(url, dest, None if file_hash is None else file_hash.lower(), progress, timeout, algorithm)
    return dest


def _fetch(url: str, dest: Path, sha256: str | None, progress: bool, timeout: float, algorithm: str = "sha256") -> None:
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in SCHEMES:
        raise ValueError(f"unsupported URL scheme {scheme!r}; expected one of {SCHEMES}")
    fd, tmp = make_temp_file(dest)
    try:
        digest = hashlib.new(algorithm)
        host = urllib.parse.urlsplit(url).netloc or scheme
        with os.fdopen(fd, "wb") as out, tqdm(
            total=None, unit="B", unit_scale=True, unit_divisor=1024, desc=f"{dest.name} ({host})",
            disable=not progress, leave=False,
        ) as bar, _kept_alive(bar):
            bar.set_postfix_str("connecting")
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                total = resp.headers.get("Content-Length")
                bar.total = int(total) if total and total.isdigit() else None
                bar.set_postfix_str("")
                while chunk := resp.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
        found = digest.hexdigest()
        if sha256 is not None and found != sha256:
            raise ChecksumError(f"{algorithm} mismatch: expected {sha256}, received {found}")
        # mkstemp creates 0600 files; a dataset cache is ordinary readable data.
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    finally:
        # After a successful os.replace the temp name is gone; otherwise
        # (any exception, KeyboardInterrupt included) remove the partial file.
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextlib.contextmanager
def _kept_alive(bar, interval: float = 0.5):
    """Redraws ``bar`` every ``interval`` seconds while the body blocks (connecting, or
    waiting for a slow mirror), so its elapsed time keeps moving."""
    if bar.disable:
        yield
        return
    stop = threading.Event()

    def tick():
        while not stop.wait(interval):
            bar.refresh()

    thread = threading.Thread(target=tick, name="download-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _reason(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP {err.code} {err.reason}"
    if isinstance(err, urllib.error.URLError):
        return f"{type(err).__name__}: {err.reason}"
    return f"{type(err).__name__}: {err}"

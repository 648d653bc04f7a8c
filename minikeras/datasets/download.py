"""Download one file from a list of mirrors, verified by sha256, atomically.

The file is streamed into a temporary file next to its destination, hashed on
the way, and renamed into place (``os.replace``) only when the hash matches.
A transfer the server cuts short of its Content-Length is resumed with a Range
request (or restarted) a few times. On any failure the temporary file is deleted
and the next mirror is tried;
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
RESUME_ATTEMPTS = 3  # a transfer cut short is resumed (or restarted) at most this many times


class DownloadError(OSError):
    """Every mirror failed. ``failures`` lists ``(url, reason)`` in the order tried."""

    def __init__(self, message: str, failures: Sequence[tuple[str, str]] = ()):
        super().__init__(message)
        self.failures = list(failures)

    def __str__(self) -> str:
        return self.args[0]


class IncompleteDownload(OSError):
    """The server closed the transfer before the Content-Length it announced, every time it was
    asked again."""


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
        host = urllib.parse.urlsplit(url).netloc or scheme
        with os.fdopen(fd, "wb") as out, tqdm(
            total=None, unit="B", unit_scale=True, unit_divisor=1024, desc=f"{dest.name} ({host})",
            disable=not progress, leave=False,
        ) as bar, _kept_alive(bar):
            found = _transfer(url, out, bar, timeout, algorithm)
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


def _transfer(url: str, out, bar, timeout: float, algorithm: str) -> str:
    """Streams ``url`` into the file ``out`` and returns the bytes' hex digest. A transfer cut short
    of its Content-Length (the connection closed or reset mid-file) is resumed where it stopped
    with a Range request, or restarted when the server answers with the whole file, at most
    ``RESUME_ATTEMPTS`` times; then ``IncompleteDownload``. The file is never shorter than
    announced when this returns."""
    digest, received, expected = hashlib.new(algorithm), 0, None
    for _ in range(RESUME_ATTEMPTS + 1):
        request = urllib.request.Request(url)
        if received:
            request.add_header("Range", f"bytes={received}-")
        bar.set_postfix_str("connecting")
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            length = resp.headers.get("Content-Length")
            length = int(length) if length and length.isdigit() else None
            if received and not _resumes_at(resp, received):
                out.seek(0)  # the server sent the whole file again: start over
                out.truncate()
                digest, received = hashlib.new(algorithm), 0
            expected = None if length is None else received + length
            bar.reset(total=expected)
            bar.update(received)
            bar.set_postfix_str("")
            try:
                while chunk := resp.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
            except (ConnectionError, TimeoutError, http.client.IncompleteRead):
                if expected is None:
                    raise  # without a length there is nothing to resume against
        if expected is None or received >= expected:
            return digest.hexdigest()
    raise IncompleteDownload(f"the server closed the transfer after {received} of {expected} bytes, "
                             f"{RESUME_ATTEMPTS + 1} times (the first request and {RESUME_ATTEMPTS} resumes)")


def _resumes_at(resp, offset: int) -> bool:
    """Whether ``resp`` answers a Range request with the bytes from ``offset`` on (206, and a
    Content-Range starting there)."""
    content_range = resp.headers.get("Content-Range") or ""
    return getattr(resp, "status", None) == 206 and content_range.startswith(f"bytes {offset}-")


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

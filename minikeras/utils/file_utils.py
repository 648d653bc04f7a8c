"""``get_file``: a file from a URL, cached, verified by its hash and optionally extracted.

The download itself is ``minikeras.datasets.download.fetch_url`` (streamed into a temp file,
hashed on the way, renamed into place only when the hash matches).
"""
import hashlib
import os
import shutil
import sys
import tarfile
import urllib.error
import urllib.parse
import warnings
import zipfile
from pathlib import Path

from minikeras.datasets.download import ChecksumError, DownloadError, fetch_url


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None, force_download=False):
    """Downloads ``origin`` into the cache unless it is there already, as ``keras.utils.get_file``.

    Args:
      fname: the file's name in the cache (no directories); None takes the URL's last part.
      origin: the URL (http, https or file).
      untar: deprecated; ``extract=True`` with a tar archive.
      md5_hash: deprecated; ``file_hash`` with ``hash_algorithm='md5'``.
      file_hash: the expected hex digest: a cached file that does not match is downloaded
        again, and a download that does not match raises ValueError.
      cache_subdir: the folder under ``cache_dir`` (or an absolute path).
      hash_algorithm: 'sha256', 'md5' or 'auto' (sha256 for a 64-digit hash, else md5).
      extract: extract the archive (tar, tar.gz, tar.bz2 or zip) next to it.
      archive_format: 'auto' (tar then zip), 'tar', 'zip' or None.
      cache_dir: the cache's root; None is ``$MINIKERAS_HOME`` (``~/.minikeras``).
      force_download: download even when the file is cached.

    Returns:
      The path of the file, or of the folder it was extracted into when ``extract``.

    Raises:
      OSError: the URL could not be read (offline, no such host, an HTTP error); the message
        says where to put the file by hand.
      ValueError: the downloaded file does not have ``file_hash``.

    Example:
      >>> path = get_file(origin="https://example.com/data/flowers.tgz", extract=True)
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    datadir = _cache_folder(cache_dir, cache_subdir)
    fname, named_by_caller = _file_name(fname, origin)
    target, extraction_dir = _cache_paths(datadir, fname, named_by_caller, extract or untar)
    algorithm = _algorithm(hash_algorithm, file_hash)
    if _needs_download(target, file_hash, algorithm, force_download):
        _download(origin, target, file_hash, algorithm)
    if extraction_dir is not None:
        if not extract_archive(target, extraction_dir, "tar" if untar else archive_format):
            warnings.warn(f"Could not extract archive {target}: it is not a {archive_format} archive", stacklevel=2)
        return str(extraction_dir)
    return str(target)


def _cache_folder(cache_dir, cache_subdir):
    """The folder the file is cached in (made if missing): ``cache_subdir`` under ``cache_dir``
    (None: ``$MINIKERAS_HOME``, else ``~/.minikeras``)."""
    if cache_dir is None:
        cache_dir = os.environ.get("MINIKERAS_HOME") or "~/.minikeras"
    datadir = Path(os.path.expanduser(cache_dir)) / cache_subdir
    datadir.mkdir(parents=True, exist_ok=True)
    return datadir


def _file_name(fname, origin):
    """(the file's name in the cache, whether the caller gave it): ``fname``, which may not be a
    path, or else the last part of the URL ``origin``."""
    given_name = os.fspath(fname) if fname is not None else None
    if not given_name:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'. Please specify the "
                             "`fname` argument.")
        return fname, False
    if os.sep in given_name:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={given_name}")
    return given_name, True


def _cache_paths(datadir, fname, named_by_caller, extracting):
    """(the path of the downloaded file, the folder it is extracted into or None), as Keras
    names them: a caller's ``name.ext`` archive goes to ``name_extracted``; an archive named
    without an extension, or by its URL, is kept as ``<fname>_archive`` and extracted into
    ``<fname>``."""
    if not extracting:
        return datadir / fname, None
    if named_by_caller and "." in fname:
        return datadir / fname, datadir / f"{fname[:fname.find('.')]}_extracted"
    return datadir / f"{fname}_archive", datadir / fname


def _needs_download(target, file_hash, algorithm, force_download):
    """Whether to download: forced, not cached, or cached with another hash than ``file_hash``."""
    if force_download or not target.exists():
        return True
    if file_hash is not None and hash_file(target, algorithm) != str(file_hash).lower():
        print(f"A local file was found, but it seems to be incomplete or outdated because the {algorithm} file hash "
              f"does not match the original value of {file_hash} so we will re-download the data.", file=sys.stderr)
        return True
    return False


def _download(origin, target, file_hash, algorithm):
    """Fetches ``origin`` into ``target``, checked against ``file_hash``: a hash that does not match
    is a ValueError, a URL that cannot be read a ``DownloadError`` saying where to put the file."""
    print(f"Downloading data from {origin}", file=sys.stderr, flush=True)
    try:
        fetch_url(origin, target, file_hash, algorithm)
    except ChecksumError as err:
        raise ValueError(f"Incomplete or corrupted file detected. The {algorithm} file hash does not match the "
                         f"provided value of {file_hash} ({err}).") from None
    except (OSError, ValueError) as err:
        raise DownloadError(
            f"URL fetch failure on {origin}: {_reason(err)}. If this machine is offline, download the file "
            f"elsewhere and copy it to {target} (it is then used from the cache"
            f"{', checked against file_hash' if file_hash else ''}).", [(origin, _reason(err))]) from err


def hash_file(path, algorithm="sha256", chunk_size=1 << 20):
    """The hex digest of a file ('sha256' or 'md5')."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def extract_archive(file_path, path=".", archive_format="auto"):
    """Extracts a tar (plain, gz, bz2, xz) or zip archive into ``path``; members that would land
    outside ``path`` (absolute paths, ``..``, links out) are refused. Returns False when the
    file is none of ``archive_format`` ('auto': tar then zip)."""
    if archive_format is None:
        return False
    formats = ["tar", "zip"] if archive_format == "auto" else [archive_format]
    for kind in formats:
        if kind == "tar" and tarfile.is_tarfile(file_path):
            opener, extract = tarfile.open, _extract_tar
        elif kind == "zip" and zipfile.is_zipfile(file_path):
            opener, extract = zipfile.ZipFile, _extract_zip
        elif kind not in ("tar", "zip"):
            raise ValueError(f"archive_format must be 'auto', 'tar', 'zip' or None, received {archive_format!r}")
        else:
            continue
        with opener(file_path) as archive:
            try:
                extract(archive, os.fspath(path))
            except BaseException:
                shutil.rmtree(path, ignore_errors=True)
                raise
        return True
    return False


def _extract_tar(archive, path):
    archive.extractall(path, filter="data")  # refuses absolute paths, '..' and links leaving path


def _extract_zip(archive, path):
    root = os.path.realpath(path)
    for name in archive.namelist():
        where = os.path.realpath(os.path.join(root, name))
        if os.path.commonpath([root, where]) != root:
            raise ValueError(f"Refusing to extract '{name}': it would be written outside {path}")
    archive.extractall(path)


def _algorithm(hash_algorithm, file_hash):
    if hash_algorithm == "auto":
        return "sha256" if file_hash is not None and len(file_hash) == 64 else "md5"
    if hash_algorithm not in ("sha256", "md5"):
        raise ValueError(f"hash_algorithm must be 'auto', 'sha256' or 'md5', received {hash_algorithm!r}")
    return hash_algorithm


def _reason(err):
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP {err.code} {err.reason}"
    if isinstance(err, urllib.error.URLError):
        return f"{err.reason}"
    return f"{type(err).__name__}: {err}"

"""Builds a C++ source of minikeras' into a shared library with the machine's compiler, once.

    library = load_library("conv_native.cc")   # a ctypes.CDLL, or None (see ``why_unavailable``)
    register_targets("conv_native.cc", {"minikeras_conv2d_forward": "MinikerasConv2dForward"})  # True / False

The library is compiled for this CPU (``-O3 -march=native``) against the XLA FFI headers jaxlib
ships (``jax.ffi.include_dir()``) and kept in ``$MINIKERAS_HOME/native`` (``~/.minikeras/native``),
named by a hash of everything that went into it: the source and the headers beside it, the
compiler and its version, the flags, the headers' jaxlib version and the CPU's feature flags.
So a second run loads it in milliseconds, and a changed source, compiler, jaxlib or machine (a
home directory shared over the network) gets a build of its own. A build is written to a temporary file and renamed into
place, so a crash or a concurrent run never leaves a half-written library to load.

Processes started at once on one home directory build each library once: a build holds a file
lock (``<library>.lock``) and a process that waited on it loads what the other built. While a
process builds, it prints one line to stderr saying so.

Without a C++ compiler (``$CXX``, else ``c++``, ``g++`` or ``clang++`` on the PATH), on a platform
other than Linux or macOS, or when the build fails, ``load_library`` returns None,
``why_unavailable`` says why, and one warning per process names the reason; callers then use
XLA's own kernels, whose results are close (sums may run in another order) and slower. Setting
``MINIKERAS_NATIVE=0`` turns the native kernels off altogether, without a warning. ``status()``
says whether they are on and, if not, why (``mk.config.native_kernels()``).
"""
import concurrent.futures
import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import filelock
import jax
import jaxlib

# Every source minikeras builds: when one is first needed, all that are missing are built at
# once, in parallel (each takes seconds, mostly parsing the FFI headers), so that a first run
# waits for one build's time, not for one after another as each kernel is first used.
SOURCES = ("conv_native.cc", "matmul_native.cc", "materialize.cc", "adam_native.cc", "random_native.cc",
           "head_native.cc", "conv_bf16_native.cc", "matmul_bf16_native.cc",
           "batch_moments_native.cc", "rnn_step_native.cc", "logits_crossentropy_native.cc", "rnn_loops_native.cc",
           "winograd_native.cc")

_FLAGS = ("-O3", "-march=native", "-ffp-contract=fast", "-std=c++17", "-shared", "-fPIC", "-pthread")
# Sources that must round as XLA's elementwise code does, bit for bit: they write out the fused
# multiply-adds XLA makes, and the compiler must add none of its own.
# (-fno-math-errno lets sqrt be a vector instruction; no result changes.)
_SOURCE_FLAGS = {"adam_native.cc": ("-ffp-contract=off", "-fno-math-errno"),
                 "head_native.cc": ("-ffp-contract=off", "-fno-math-errno"),
                 "logits_crossentropy_native.cc": ("-ffp-contract=off", "-fno-math-errno"),
                 "rnn_loops_native.cc": ("-ffp-contract=off", "-fno-math-errno")}
_BUILD_TIMEOUT_S = 300

_why_unavailable = {}
_registered = set()  # FFI target names registered by register_targets
_builds = {}  # library path -> Future of its build, while this process builds it
_builds_lock = threading.Lock()
_announced = []  # the line saying that this process builds, printed once
_warned = []  # the fallback warning, given once


def library_directory():
    """``$MINIKERAS_HOME/native``; ``MINIKERAS_HOME`` defaults to ``~/.minikeras``."""
    home = os.environ.get("MINIKERAS_HOME") or "~/.minikeras"
    return os.path.join(os.path.expanduser(home), "native")


def native_enabled():
    """False when the environment variable ``MINIKERAS_NATIVE`` is ``0`` (or ``false``/``off``)."""
    return os.environ.get("MINIKERAS_NATIVE", "1").strip().lower() not in ("0", "false", "off", "no")


def usable_cpus():
    """The CPUs this process may run on: the most threads a native kernel should use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no sched_getaffinity
        return os.cpu_count() or 1


def why_unavailable(source):
    """Why ``load_library(source)`` returned None ('' if it did not, or was not called)."""
    return _why_unavailable.get(source, "")


def _source_path(name):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


def _compiler():
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _cpu_flags():
    """The CPU's feature flags, which ``-march=native`` compiles for."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


@functools.lru_cache(maxsize=None)
def _compiler_version(compiler):
    try:
        return subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _sources(source_path):
    """The source and every header beside it (a source may include any of them), as bytes."""
    folder = os.path.dirname(source_path)
    paths = [source_path] + sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".h"))
    parts = []
    for path in paths:
        with open(path, "rb") as f:
            parts.append(os.path.basename(path).encode() + b"\0" + f.read())
    return b"\0".join(parts)


def _flags(source_path):
    """The compiler flags for a source: the common ones, then its own (the last of a kind wins)."""
    return (*_FLAGS, *_SOURCE_FLAGS.get(os.path.basename(source_path), ()))


def _library_path(source_path, compiler):
    key = hashlib.sha256()
    for part in (_sources(source_path), compiler.encode(), _compiler_version(compiler).encode(),
                 " ".join(_flags(source_path)).encode(), jaxlib.__version__.encode(), platform.machine().encode(),
                 _cpu_flags().encode()):
        key.update(part)
        key.update(b"\0")
    stem = os.path.splitext(os.path.basename(source_path))[0]
    return os.path.join(library_directory(), f"{stem}-{key.hexdigest()[:16]}.so")


def _build(source_path, target, compiler):
    """Compiles into a temporary file next to ``target``, then renames it into place."""
    fd, partial = tempfile.mkstemp(prefix=os.path.basename(target) + ".", suffix=".partial",
                                   dir=os.path.dirname(target))
    os.close(fd)
    try:
        command = [compiler, *_flags(source_path), "-I", jax.ffi.include_dir(), source_path, "-o", partial]
        done = subprocess.run(command, capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr.strip()[-2000:]}")
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _built_with_the_others(source, compiler):
    """Builds ``source`` and every other missing one of ``SOURCES``, in parallel; returns when all are
    done (raising ``source``'s error, if it failed). Holds the folder's file lock meanwhile, so that
    a process started beside this one waits and then loads what this one built."""
    os.makedirs(library_directory(), exist_ok=True)
    with filelock.FileLock(os.path.join(library_directory(), ".build.lock"), timeout=_BUILD_TIMEOUT_S):
        with _builds_lock:
            missing = []
            for name in dict.fromkeys((source, *SOURCES)):
                path = _source_path(name)
                target = _library_path(path, compiler)
                # two names may share a target (one source under two names): build it once, so that
                # every build started is one that the wait below covers
                if target not in _builds and not os.path.exists(target) and \
                        all(target != other for _, _, other in missing):
                    missing.append((name, path, target))
            if missing:
                _announce_build([name for name, _, _ in missing], compiler)
                progress = _Progress(len(missing))
                for name, path, target in missing:
                    _builds[target] = _builder().submit(_build_reporting, name, path, target, compiler, progress)
            futures = list(_builds.values())
            future = _builds.get(_library_path(_source_path(source), compiler))
        concurrent.futures.wait(futures)
    if future is not None:  # None: another process built it while this one waited for the lock
        future.result()


def _announce_build(names, compiler):
    if not _announced:
        _announced.append(True)
        print(f"minikeras: compiling {len(names)} native CPU kernel libraries "
              f"({', '.join(n.split('.')[0] for n in names)}) with {compiler} -O3 -march=native into "
              f"{library_directory()}, in parallel. This happens once per machine and jaxlib version, and takes "
              "longer on a busy machine; each library is reported when built",
              file=sys.stderr, flush=True)


class _Progress:
    """Counts the libraries a build round has finished, for the lines ``_build_reporting`` prints."""

    def __init__(self, total):
        self.total, self.done, self.started = total, 0, time.perf_counter()
        self.lock = threading.Lock()

    def finished(self, name):
        with self.lock:
            self.done += 1
            return self.done, time.perf_counter() - self.started


def _build_reporting(name, path, target, compiler, progress):
    """``_build``, then one line of progress (which library, how many of the round, time so far)."""
    _build(path, target, compiler)
    done, seconds = progress.finished(name)
    print(f"minikeras: built {name.split('.')[0]} ({done}/{progress.total}, {seconds:.1f} s)"
          + (" - native kernels ready" if done == progress.total else ""), file=sys.stderr, flush=True)


def _unavailable(source, reason, warn=True):
    """Records why ``source`` has no library; the first time in a process, warns that XLA's kernels
    run instead (not when the user turned the kernels off)."""
    _why_unavailable[source] = reason
    if warn and not _warned:
        _warned.append(True)
        warnings.warn(f"minikeras runs XLA's CPU kernels instead of its native ones, so training is slower and "
                      f"results differ in the last bits: {reason}. Set MINIKERAS_NATIVE=0 to choose that "
                      f"without this warning.", RuntimeWarning, stacklevel=4)
    return None


@functools.lru_cache(maxsize=None)
def _builder():
    return concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(len(SOURCES), os.cpu_count() or 1)),
                                                 thread_name_prefix="minikeras-native-build")


@functools.lru_cache(maxsize=None)
def load_library(source):
    """The library built from ``source`` (a file name in this folder), or None.

    Builds it on first use on this machine (compiling all of ``SOURCES``, once) and loads it from
    ``library_directory()`` after that. None, with the reason in ``why_unavailable(source)``,
    when native kernels are off, there is no compiler, or the build fails.
    """
    if not native_enabled():
        return _unavailable(source, "MINIKERAS_NATIVE=0 turns native kernels off", warn=False)
    if sys.platform not in ("linux", "darwin"):
        return _unavailable(source, f"native kernels are built on Linux and macOS only, not {sys.platform}")
    compiler = _compiler()
    if compiler is None:
        return _unavailable(source, "no C++ compiler found ($CXX, c++, g++ or clang++)")
    try:
        target = _library_path(_source_path(source), compiler)
        if not os.path.exists(target):
            _built_with_the_others(source, compiler)
        return ctypes.CDLL(target)
    except (OSError, RuntimeError, subprocess.SubprocessError, filelock.Timeout) as error:
        return _unavailable(source, f"building {source} failed: {error}")


def register_targets(source, targets):
    """Registers XLA:CPU FFI targets (``{target name: handler symbol}``) from ``source``'s library.

    Returns False, registering nothing, when the library is unavailable (``why_unavailable``).
    """
    library = load_library(source)
    if library is None:
        return False
    for target, symbol in targets.items():
        if target not in _registered:
            jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(library, symbol)), platform="cpu")
            _registered.add(target)
    return True


def registered_targets():
    """The names of the FFI targets registered so far (custom calls a program may contain)."""
    return sorted(_registered)


def status():
    """Whether the native kernels are on, as ``(on, reason)``: loads (building if need be) every
    library in ``SOURCES``; ``reason`` is '' when all loaded, else why the first one did not."""
    for source in SOURCES:
        if load_library(source) is None:
            return False, why_unavailable(source)
    return True, ""

"""mk.config.enable_compilation_cache: compiled programs reused by a later process.

The setting is process-wide (jax's), so the runs that turn it on are subprocesses."""
import json
import os
import subprocess
import sys

import pytest

import minikeras as mk
from minikeras import compilation_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One mk.function step; prints how many programs jax compiled and how many it found on disk.
_PROGRAM = """
import json, sys
import jax
counts = {"compiled": 0, "hits": 0}
def on_event(name, **kwargs):
    if name == "/jax/compilation_cache/cache_hits":
        counts["hits"] += 1
def on_duration(name, seconds, **kwargs):  # (fires for programs loaded from the cache too)
    if name == "/jax/core/compile/backend_compile_duration":
        counts["compiled"] += 1
jax.monitoring.register_event_listener(on_event)
jax.monitoring.register_event_duration_secs_listener(on_duration)
import minikeras as mk
from minikeras import compilation_cache
directory = mk.config.enable_compilation_cache(sys.argv[1])
assert mk.config.compilation_cache_directory() == directory, mk.config.compilation_cache_directory()
w = mk.Variable([[1.0, 2.0], [3.0, 4.0]])

@mk.function(autograph=False)  # (source given with -c: nothing to convert)
def step(x):
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(mk.matmul(x, w) ** 2)
    w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss

loss = float(step(mk.constant([[1.0, 1.0]])))
print(json.dumps({"loss": loss, "w": w.numpy().tolist(), **counts}))
"""


def _run(directory):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("JAX_COMPILATION_CACHE_DIR", None)  # only the test's own cache (conftest may share one)
    result = subprocess.run([sys.executable, "-c", _PROGRAM, str(directory)], capture_output=True, text=True,
                            env=env, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_compiled_step_from_disk(tmp_path):
    first = _run(tmp_path / "cache")
    assert first["hits"] == 0 and first["compiled"] >= 1
    assert any(name.startswith("jit__jit_body") and name.endswith("-cache")  # the step's program
               for name in os.listdir(tmp_path / "cache"))
    second = _run(tmp_path / "cache")
    assert second["hits"] == first["compiled"]  # every program came from disk
    assert second["loss"] == first["loss"] == 52.0  # (1+3)^2 + (2+4)^2
    assert second["w"] == first["w"]


def test_bad_arguments_are_named(tmp_path):
    before = mk.config.compilation_cache_directory()  # None, or the test run's (conftest)
    with pytest.raises(TypeError, match="directory must be a path"):
        mk.config.enable_compilation_cache(3)
    with pytest.raises(ValueError, match="max_bytes must be a positive int or -1"):
        mk.config.enable_compilation_cache(tmp_path, max_bytes=0)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        mk.config.enable_compilation_cache(a_file)
    assert mk.config.compilation_cache_directory() == before  # nothing was turned on


def test_default_directory_follows_minikeras_home(monkeypatch, tmp_path):
    monkeypatch.setenv("MINIKERAS_HOME", str(tmp_path))
    assert compilation_cache.default_directory() == os.path.join(str(tmp_path), "compiled")

"""``import minikeras`` starts no JAX backend, so that what must come before one
(``mk.distribute.initialize``, ``jax.config.update("jax_num_cpu_devices", n)``, choosing
platforms) can still follow it. Checked in a fresh process, with every minikeras module imported.
"""
import os
import pathlib
import subprocess
import sys
import textwrap

REPO = pathlib.Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import importlib
    import pkgutil

    import jax
    import minikeras as mk

    for module in pkgutil.walk_packages(mk.__path__, "minikeras."):
        importlib.import_module(module.name)
    try:
        from jax._src import xla_bridge
        print("backends_started", xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):  # jax moved it: the public check below still holds
        print("backends_started", False)
    # jax refuses this (RuntimeError) once a backend has started
    jax.config.update("jax_num_cpu_devices", 3)
    print("cpu_devices", len(jax.devices("cpu")))
    mk.random.set_seed(0)  # the generator, made on first use, works on that backend
    print("draw_shape", mk.random.normal((2,)).shape)
""")


def test_importing_minikeras_starts_no_jax_backend():
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}  # no forced device count
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-4000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    assert lines["backends_started"] == "False"
    assert lines["cpu_devices"] == "3"
    assert lines["draw_shape"] == "(2,)"

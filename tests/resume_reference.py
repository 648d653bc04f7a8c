"""What the resume tests share: run ``tests/resume_job.py`` in a new process and read the weights
it saved (the ``uninterrupted`` fixture, in conftest.py, is the run they are compared with)."""
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(ROOT, "tests", "resume_job.py")


def run_job(*args):
    """Runs tests/resume_job.py in a new process; returns the finished Popen (``returncode``,
    ``pid``, and its output as ``stderr``)."""
    proc = subprocess.Popen([sys.executable, JOB, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env={**os.environ, "PYTHONPATH": ROOT, "JAX_PLATFORMS": "cpu"})
    proc.stderr = proc.communicate(timeout=300)[0]
    return proc


def weights(path):
    with np.load(path) as f:
        return [f[k] for k in sorted(f.files, key=lambda k: int(k.split("_")[1]))]

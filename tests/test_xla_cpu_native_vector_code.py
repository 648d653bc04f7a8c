"""The native kernels compile to register code on every x86-64 vector width, not only the one here.

``native_kernels.h`` picks its vector type and tile sizes by instruction set (AVX-512, AVX2,
SSE). A 64-byte GCC vector on a machine without AVX-512 is "expanded piecewise" and kept in
memory, which made the kernels ~100x slower on an AVX2 CPU while every numeric test passed. So
each source is compiled here for each x86-64 level (``-march=x86-64``, ``-v3``, ``-v4``) with
GCC's ``-Wvector-operation-performance``, which names every vector operation it cannot map to
the target's registers: there must be none (``-O1`` finds the same ones as the build's ``-O3``,
in less time). The numeric tests (``test_xla_cpu_conv_native.py``, ``test_xla_cpu_matmul_native.py``) run the
build for this machine.
"""
import os
import platform
import shutil
import subprocess

import jax
import pytest

from minikeras.xla_cpu import native_build

_FOLDER = os.path.dirname(os.path.abspath(native_build.__file__))
_GCC = shutil.which("g++")


def _is_gcc(compiler):
    if compiler is None:
        return False
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    return "clang" not in version.lower()


pytestmark = [
    pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 instruction set levels"),
    pytest.mark.skipif(not _is_gcc(_GCC), reason="GCC's -Wvector-operation-performance"),
]


@pytest.mark.parametrize("source", ["conv_native.cc", "matmul_native.cc", "batch_moments_native.cc",
                                    "rnn_step_native.cc", "rnn_loops_native.cc", "winograd_native.cc"])
@pytest.mark.parametrize("level", ["x86-64", "x86-64-v3", "x86-64-v4"])
def test_no_vector_operation_is_expanded_piecewise(source, level, tmp_path):
    command = [_GCC, "-O1", f"-march={level}", "-ffp-contract=fast", "-std=c++17", "-fPIC",
               "-Wvector-operation-performance", "-Wno-psabi", "-I", jax.ffi.include_dir(),
               "-S", os.path.join(_FOLDER, source), "-o", str(tmp_path / "out.s")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if "unrecognized" in done.stderr and level in done.stderr:
        pytest.skip(f"this GCC does not know -march={level}")
    assert done.returncode == 0, done.stderr[-2000:]
    piecewise = [line for line in done.stderr.splitlines() if "expanded piecewise" in line]
    assert not piecewise, f"{source} for {level}:\n" + "\n".join(piecewise[:10])

"""setup.py: the setuptools half of `pip install .` (pyproject.toml holds the metadata).

The C parts are built by the project's own CMake build, never by setuptools' compiler driver:
build_ext configures CMakeLists.txt into build-pip/ (not build/, which belongs to `make`; kept
between runs, so a second `pip install .` rebuilds only what changed) for the interpreter that
runs the build, builds the extension, libsluice and the `sluice` command, and lays them out in
the package:

    sluice/_sluice.<soabi>.so   the extension (libsluice's objects linked in statically, as in
                                every build: it uses internal symbols libsluice.so hides)
    sluice/lib/libsluice.so.0   the shared library, for the command and for C programs
    sluice/bin/sluice           the command (RUNPATH $ORIGIN/../lib: it finds the copy above),
                                started by the `sluice` console script (sluice/_cli.py)
    sluice/include/sluice/*.h   the public headers

Environment: SLUICE_CUDA (ON/OFF; default: CMake's auto-detection, ON iff nvcc works),
SLUICE_CMAKE_ARGS (extra configure arguments, split like a shell would), SLUICE_BUILD_JOBS
(parallel build jobs; default: the CPU count). A failed configure or build stops the install
with CMake's own output above the error.
"""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
BUILD_BASE = "build-pip"


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*sluice\s+VERSION\s+([0-9.]+)", text)
    if not m:
        raise RuntimeError("setup.py: no `project(sluice VERSION x.y.z)` in CMakeLists.txt")
    return m.group(1)


class CMakeExtension(Extension):
    """The extension sluice._sluice, whose sources CMake knows (python/CMakeLists.txt)."""

    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures and builds the CMake project, then copies its products into the package."""

    def run(self):
        if shutil.which("cmake") is None:
            raise RuntimeError("sluice needs cmake (>= 3.25) to build: apt-get install cmake "
                               "(the other build dependencies are in scripts/setup.sh)")
        for ext in self.extensions:
            self.build_cmake(ext)

    def configure_args(self):
        args = [
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DSLUICE_PYTHON={sys.executable}",
            "-DSLUICE_PYTHON_MODULE=ON",
            "-DSLUICE_BUILD_TESTS=OFF",
            "-DSLUICE_BUILD_BENCH=OFF",
            "-DSLUICE_WERROR=OFF",
            # The layout the command's RUNPATH ($ORIGIN/../lib) expects.
            "-DCMAKE_INSTALL_BINDIR=bin",
            "-DCMAKE_INSTALL_LIBDIR=lib",
            "-DCMAKE_INSTALL_INCLUDEDIR=include",
        ]
        cuda = os.environ.get("SLUICE_CUDA", "").strip()
        if cuda:
            args.append(f"-DSLUICE_CUDA={cuda}")
        args += shlex.split(os.environ.get("SLUICE_CMAKE_ARGS", ""))
        return args

    def build_cmake(self, ext):
        cmake_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        stage = pathlib.Path(self.build_temp).resolve() / "stage"
        jobs = os.environ.get("SLUICE_BUILD_JOBS") or str(os.cpu_count() or 1)
        cmake_dir.mkdir(parents=True, exist_ok=True)
        self.spawn(["cmake", "-S", str(ROOT), "-B", str(cmake_dir)] + self.configure_args())
        self.spawn(["cmake", "--build", str(cmake_dir), "-j", jobs,
                    "--target", "sluice_python", "sluice", "sluice_cli"])
        if stage.exists():
            shutil.rmtree(stage)
        # Component "Unspecified": the library, headers and command, not the Python package
        # (which this build lays out itself).
        self.spawn(["cmake", "--install", str(cmake_dir), "--prefix", str(stage),
                    "--component", "Unspecified"])

        built = sorted((cmake_dir / "python" / "sluice").glob("_sluice*.so"))
        if len(built) != 1:
            raise RuntimeError(f"setup.py: expected one extension in {cmake_dir}/python/sluice, "
                               f"found {[p.name for p in built]}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)

        pkg = target.parent
        for sub in ("lib", "bin", "include"):
            if (pkg / sub).exists():
                shutil.rmtree(pkg / sub)
        (pkg / "lib").mkdir()
        # Wheels hold no symbolic links: only the name the command is linked against.
        shutil.copyfile(stage / "lib" / "libsluice.so.0", pkg / "lib" / "libsluice.so.0")
        (pkg / "bin").mkdir()
        shutil.copy2(stage / "bin" / "sluice", pkg / "bin" / "sluice")
        shutil.copytree(stage / "include", pkg / "include")


# setuptools writes its own build tree and egg-info next to build-pip's CMake tree, away from
# `make`'s build/ and from the sources.
(ROOT / BUILD_BASE).mkdir(exist_ok=True)
setup(
    version=project_version(),
    packages=["sluice", "sluice.plugin"],
    package_dir={"": "python"},
    ext_modules=[CMakeExtension("sluice._sluice")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
    zip_safe=False,
)

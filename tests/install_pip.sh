#!/usr/bin/env bash
# tests/install_pip.sh SOURCE_DIR [TREE]: `pip install .` into a fresh virtual environment of
# Debian's /usr/bin/python3 (--system-site-packages, so NumPy and torch come from Debian;
# offline: --no-build-isolation --no-index), then uses the installed package as a user would,
# from another directory:
#   - `import sluice` loads the venv's copy, whose version is the project's;
#   - a pipeline reads files and flips an external source's arrays, checked against the files'
#     bytes and NumPy;
#   - sluice.distributed reads a launcher's variables;
#   - the extension needs no libsluice.so, the wheel's command finds the wheel's
#     libsluice.so.0 (RUNPATH $ORIGIN/../lib), and the `sluice` console script runs it;
#   - a C program builds against the wheel's headers and library and, given TREE (a class
#     folder tree of JPEGs, tests/data/make_tree.py), reads one epoch of it;
#   - pip uninstall removes it.
# The CMake build of pip lives in SOURCE_DIR/build-pip (kept: a second run rebuilds only what
# changed). PYTHON (default /usr/bin/python3) picks the interpreter.
set -euo pipefail
src=$(cd "$1" && pwd) tree=${2:+$(cd "$2" && pwd)}
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d /tmp/sluice-pip-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
venv=$tmp/venv

"$python" -m venv --system-site-packages "$venv"
if ! (cd "$src" && "$venv/bin/pip" install --no-build-isolation --no-index . \
        >"$tmp/pip.log" 2>&1); then
    cat "$tmp/pip.log" >&2
    echo "install_pip: pip install failed (log above)" >&2
    exit 1
fi
echo "install_pip: $(grep -E '^Successfully installed' "$tmp/pip.log")"

want_version=$(sed -nE 's/^project\(sluice VERSION ([0-9.]+).*/\1/p' "$src/CMakeLists.txt")
cd "$tmp"
mkdir -p files/c0 files/c1
for i in 0 1 2 3 4; do printf 'sample %d' "$i" > "files/c$((i % 2))/f$i.txt"; done

env -u PYTHONPATH SLUICE_WANT_VERSION="$want_version" SLUICE_VENV="$venv" \
    "$venv/bin/python" - <<'PY'
import os, pathlib, subprocess, sys
import numpy as np
import sluice
from sluice import fn, pipeline_def

venv = pathlib.Path(os.environ["SLUICE_VENV"]).resolve()
pkg = pathlib.Path(sluice.__file__).resolve().parent
assert venv in pkg.parents, f"sluice imported from {pkg}, not from the venv {venv}"
assert sluice.__version__ == os.environ["SLUICE_WANT_VERSION"], sluice.__version__

files = sorted(pathlib.Path("files").rglob("*.txt"))  # readers.file's order: c0 then c1, sorted

@pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=1)
def pipe():
    data, labels = fn.readers.file(file_root="files", file_filters=["*.txt"], name="r")
    x = fn.external_source(source=lambda: [np.arange(12, dtype=np.uint8).reshape(2, 2, 3) + i
                                           for i in range(len(files))], batch=True,
                           layout="HWC")
    return data, labels, fn.flip(x, horizontal=1)

p = pipe()
p.build()
data, labels, flipped = p.run()
for i, f in enumerate(files):
    assert data.at(i).tobytes() == f.read_bytes(), (i, f)
    assert int(labels.at(i)[0]) == int(f.parent.name[1:]), (i, f)
    want = (np.arange(12, dtype=np.uint8).reshape(2, 2, 3) + i)[:, ::-1, :]
    np.testing.assert_array_equal(flipped.at(i), want)

os.environ.update(RANK="2", WORLD_SIZE="3", LOCAL_RANK="0")
assert (sluice.distributed.rank(), sluice.distributed.world_size(),
        sluice.distributed.local_rank()) == (2, 3, 0)

ext = next(pkg.glob("_sluice*.so"))
ldd = subprocess.run(["ldd", str(ext)], capture_output=True, text=True, check=True).stdout
assert "libsluice" not in ldd, ldd
cli = pkg / "bin" / "sluice"
ldd = subprocess.run(["ldd", str(cli)], capture_output=True, text=True, check=True).stdout
line = next(l for l in ldd.splitlines() if "libsluice.so.0" in l)
assert str(pkg / "lib" / "libsluice.so.0") in os.path.realpath(line.split("=>")[1].split()[0]) \
    or os.path.samefile(line.split("=>")[1].split()[0], pkg / "lib" / "libsluice.so.0"), line
out = subprocess.run([str(venv / "bin" / "sluice"), "--version"], capture_output=True,
                     text=True, check=True).stdout
assert os.environ["SLUICE_WANT_VERSION"] in out, out
out = subprocess.run([str(venv / "bin" / "sluice"), "ops"], capture_output=True, text=True,
                     check=True).stdout
assert "readers.file" in out, out
print(f"install_pip: imported from {pkg}; pipeline, distributed, extension, command ok")
PY

pkg=$(env -u PYTHONPATH "$venv/bin/python" -c 'import os, sluice; print(os.path.dirname(sluice.__file__))')
cc "$src/examples/validate.c" -I"$pkg/include" "$pkg/lib/libsluice.so.0" \
    -Wl,-rpath,"$pkg/lib" -o "$tmp/validate"
if [ -n "$tree" ]; then
    n=$(find "$tree" -name '*.jpg' | wc -l)
    got=$("$tmp/validate" "$tree" | grep -c '^batch [0-9]*: 64 x 3x224x224 float32$' || true)
    [ "$got" = $(( (n + 63) / 64 )) ] || { echo "install_pip: validate read $got batches" >&2; exit 1; }
    echo "install_pip: examples/validate.c against the wheel's library: $got batches of $tree"
fi

"$venv/bin/pip" uninstall -y sluice >/dev/null
# (a `make install` copy in the system's site directory may still be importable: not the venv's)
if [ -e "$pkg" ]; then
    echo "install_pip: $pkg is still there after pip uninstall" >&2
    exit 1
fi
echo "install_pip ok"

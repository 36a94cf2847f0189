#!/bin/bash
# scripts/device-prepare.sh: makes here (Debian 12) what a fresh lent GPU machine lacks for
# scripts/device-gpu.sh, in git-ignored folders that the device run carries:
#
#   .device-debs/              the packages (scripts/device-debs.sh): libraries with headers,
#                              pkgconf, pytest
#   .device-testdata/          testdata/ and testtree/ exactly as this machine's ctest fixtures
#                              make them from Debian's wallpaper photos, which that machine lacks
#                              (testcases/, 160+ MiB of operator reference cases, stays here: no
#                              GPU test reads it)
#   build/bench-data/n500-s0/  500 photos for the benchmarks (bench/make_dataset.py, seed 0)
#
# It checks that together they fit the device tool's 64 MiB carry limit, then prints the call:
# the device tool's `run` with carry [".device-debs", ".device-testdata",
# "build/bench-data/n500-s0"] and command "scripts/device-gpu.sh" (see that script's header).
# BUILD_DIR (default build) is the configured build tree whose fixtures make the test data.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
DATA=build/bench-data/n500-s0
PY=${PYTHON:-/usr/bin/python3}

scripts/device-debs.sh >/dev/null 2>&1 || { echo "device-prepare: scripts/device-debs.sh failed" >&2; exit 1; }
echo "device-prepare: .device-debs/ ($(ls .device-debs/*.deb | wc -l) packages)"

[ -f "$BUILD/CTestTestfile.cmake" ] || make configure BUILD_DIR="$BUILD" >/dev/null
(cd "$BUILD" && ctest -R '^fixture\.testdata\.(images|tree)$' >/dev/null) ||
    { echo "device-prepare: the test data fixtures failed in $BUILD" >&2; exit 1; }
rm -rf .device-testdata
mkdir -p .device-testdata
cp -a "$BUILD/testdata" "$BUILD/testtree" .device-testdata/
echo "device-prepare: .device-testdata/ (testdata, testtree from $BUILD)"

if [ ! -d "$DATA" ]; then
    rm -rf "$DATA.tmp"
    "$PY" bench/make_dataset.py --out "$DATA.tmp" --n 500 --seed 0 >/dev/null
    mv "$DATA.tmp" "$DATA"
fi
echo "device-prepare: $DATA ($(find "$DATA" -name '*.jpg' | wc -l) photos)"

total=$(du -scm .device-debs .device-testdata "$DATA" | tail -1 | cut -f1)
if [ "$total" -gt 64 ]; then
    echo "device-prepare: the carry is ${total} MiB, over the device tool's 64 MiB" >&2
    exit 1
fi
cat <<EOT
device-prepare: ${total} MiB to carry. The device call (one, 600 s; build, tests, benchmarks):
  run(carry=[".device-debs", ".device-testdata", "$DATA"],
      command="scripts/device-gpu.sh", timeout_s=600)
EOT

#!/bin/bash
# scripts/device-gpu.sh [STEPS]: sluice's GPU checks and benchmarks on a lent GPU machine (the
# `device` tool), in one command, from the repository root there:
#
#   here:  scripts/device-debs.sh                      # once: the packages the machine lacks
#          bench/make_dataset.py --out build/bench-data/n500-s0 --n 500 --seed 0   (or make bench)
#   run:   carry [".device-debs", "build/bench-data/n500-s0"],
#          command "scripts/device-gpu.sh build,test,bench,scaling"
#
# STEPS (comma-separated, default all): build (configure and build build-gpu/ with CUDA),
# test (ctest -L 'gpu|gpu-emulated': every kernel against its CPU operator on the device),
# bench (bench/gpu.py: train with the GPU stage against the CPU pipeline and torchvision's
# DataLoader; crop_mirror_normalize's bandwidth against a device-to-device copy), scaling
# (bench/run: the decode bound and sluice's train and val pipelines on 1 .. all CPU threads,
# issue 5's 16-thread goal). What comes back in $OUT (the device tool brings back at most 8
# files; /tmp/sluice-out elsewhere): steps.txt (the machine, each step and its output's tail),
# build.txt, ctest-gpu.txt, gpu.md and gpu.json (bench/gpu.py), scaling.md and scaling.json
# (bench/run).
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=",${1:-build,test,bench,scaling},"
OUT=${OUT:-/tmp/sluice-out}
DEPS=${SLUICE_DEPS:-/opt/sluice-deps}
DATA=${SLUICE_DATA:-build/bench-data/n500-s0}
BUILD=${SLUICE_GPU_BUILD:-build-gpu}
JOBS=$(nproc)
mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/steps.txt"; }
tail_to_steps() { tail -"$1" "$2" | tee -a "$OUT/steps.txt"; }

# The carried packages, unpacked into $DEPS (absolute links made to point inside it), found
# through pkg-config's sysroot; the libraries through LD_LIBRARY_PATH.
if [ -d .device-debs ] && ls .device-debs/*.deb >/dev/null 2>&1; then
    mkdir -p "$DEPS"
    for f in .device-debs/*.deb; do dpkg -x "$f" "$DEPS"; done
    find "$DEPS" -type l -lname '/*' | while read -r l; do ln -sfn "$DEPS$(readlink "$l")" "$l"; done
    ML="$DEPS/usr/lib/x86_64-linux-gnu"
    export PATH="$DEPS/usr/bin:$PATH"
    export PKG_CONFIG_LIBDIR="$ML/pkgconfig:$DEPS/usr/share/pkgconfig"
    export PKG_CONFIG_SYSROOT_DIR="$DEPS"
    export LD_LIBRARY_PATH="$ML:$DEPS/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
PY=${SLUICE_PYTHON:-$(command -v python3)}
export SLUICE_PYTHON="$PY"
{ nvidia-smi || true; "$PY" --version; cmake --version | head -1; nvcc --version | tail -1; } \
    >> "$OUT/steps.txt" 2>&1
TMP=$(mktemp -d)

if [[ $STEPS == *,build,* ]]; then
    log "build ($BUILD, CUDA, Python $PY)"
    args=(-S . -B "$BUILD" -DSLUICE_WERROR=ON -DSLUICE_ASSERT=ON -DSLUICE_CUDA=ON
          -DSLUICE_PYTHON="$PY" -DPython3_EXECUTABLE="$PY")
    if ! cmake "${args[@]}" > "$OUT/build.txt" 2>&1; then
        log "configure failed with the Python package; again without it"
        cmake "${args[@]}" -DSLUICE_PYTHON_MODULE=OFF >> "$OUT/build.txt" 2>&1
    fi
    cmake --build "$BUILD" -j "$JOBS" >> "$OUT/build.txt" 2>&1 ||
        { tail_to_steps 40 "$OUT/build.txt"; exit 1; }
fi
if [[ $STEPS == *,test,* ]]; then
    log "test: ctest -L 'gpu|gpu-emulated'"
    (cd "$BUILD" && ctest -L 'gpu|gpu-emulated' --output-on-failure -j 4) > "$OUT/ctest-gpu.txt" 2>&1 \
        || log "some GPU tests failed (ctest-gpu.txt)"
    tail_to_steps 25 "$OUT/ctest-gpu.txt"
fi
if [[ $STEPS == *,bench,* ]]; then
    log "bench: bench/gpu.py on $DATA"
    "$PY" bench/gpu.py --root "$DATA" --threads 4 16 --rounds 3 --build-dir "$BUILD" \
        --out "$OUT" > "$TMP/gpu.txt" 2>&1 || log "bench/gpu.py failed"
    tail_to_steps 60 "$TMP/gpu.txt"
fi
if [[ $STEPS == *,scaling,* ]]; then
    log "scaling: bench/run, 1 .. $JOBS threads"
    # bench/run reads BUILD/bench-data/nN-sS (the machine has no wallpapers to make one)
    n=$(find "$DATA" -name '*.jpg' | wc -l)
    mkdir -p "$BUILD/bench-data"
    ln -sfn "$(realpath "$DATA")" "$BUILD/bench-data/n$n-s0"
    "$PY" bench/run --no-build --build-dir "$BUILD" --n "$n" --seed 0 --rounds 1 \
        --threads "$JOBS" --only '^(decode_full|sluice_train|sluice_val)(_t[0-9]+)?$' \
        --out "$TMP" > "$TMP/scaling.txt" 2>&1 || log "bench/run failed"
    tail_to_steps 30 "$TMP/scaling.txt"
    cp "$TMP/latest.md" "$OUT/scaling.md" 2>/dev/null || true
    cp "$TMP/latest.json" "$OUT/scaling.json" 2>/dev/null || true
fi
log "done"

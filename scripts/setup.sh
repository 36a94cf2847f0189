#!/usr/bin/env bash
# scripts/setup.sh: installs the Debian 12 packages sluice needs to build, test and benchmark.
#
# Idempotent and silent when everything is already installed: it asks dpkg first and runs
# `apt-get update` + `apt-get install` only for what is missing. Runs as root (or through sudo
# when that is available). Exit status: 0 when every package is installed afterwards.
set -euo pipefail

packages=(
    # build
    build-essential cmake pkg-config
    # libraries linked by libsluice
    libjpeg62-turbo-dev libspng-dev zlib1g-dev libjansson-dev
    # liblmdb (readers.caffe, readers.caffe2); python3-lmdb writes their test databases
    liblmdb-dev python3-lmdb
    # C tests and format check; graphviz: the tests draw `sluice graph`'s DOT with dot -Tsvg
    libcmocka-dev clang-format graphviz
    # sanitizer runtimes for gcc 12 (-fsanitize=address,undefined / thread), and clang's with
    # libFuzzer (make fuzz: clang -fsanitize=fuzzer, in libclang-rt-14-dev)
    libasan8 libubsan1 libtsan2 clang libclang-rt-14-dev
    # the Python package (python3-dev: headers for the extension), Python tests, test-data
    # generators, references for comparisons, benchmarks
    python3 python3-dev python3-numpy python3-pil python3-opencv python3-pytest python3-torch
    python3-torchvision libjpeg-turbo-progs
    # the launcher tests run real `mpirun -np 4` jobs (sluice.distributed, "auto" shards);
    # python3-venv: `make test-pip` installs the package into a fresh virtual environment
    openmpi-bin python3-venv python3-setuptools python3-wheel python3-pip
    # the DataLoader tests watch worker processes (tests/python/test_dataloader.py)
    python3-psutil
    # the chart of bench/run (docs/performance.md)
    python3-matplotlib
    # real photographs used as test data
    plasma-workspace-wallpapers mate-backgrounds ukui-wallpapers
)

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
        missing+=("$p")
    fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "setup.sh: missing packages (${missing[*]}) and not root; run as root" >&2
        exit 1
    fi
fi

echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq "${missing[@]}"

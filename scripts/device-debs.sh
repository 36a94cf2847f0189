#!/bin/sh
# scripts/device-debs.sh: fetch, on this Debian 12 machine, the packages that a lent GPU machine
# (the `device` tool's H100 / H200: Python 3.12 with torch, CUDA, CMake, no package registry)
# lacks to build and test sluice: libjpeg-turbo (and its jpegtran, for device-gpu.sh's restart
# step), libspng, zlib, jansson, lmdb and cmocka with their headers, pkgconf, and pytest (pure Python) for the GPU tests of tests/python. They go to
# .device-debs/ (git-ignored), which a run carries there, where scripts/device-gpu.sh unpacks
# them beside the system, never over it. scripts/device-prepare.sh calls this; see its header.
set -eu
cd "$(dirname "$0")/.."
mkdir -p .device-debs
cd .device-debs
rm -f ./*.deb
apt-get download libjpeg62-turbo libjpeg62-turbo-dev libjpeg-turbo-progs libspng0 libspng-dev zlib1g zlib1g-dev \
    libjansson4 libjansson-dev liblmdb0 liblmdb-dev libcmocka0 libcmocka-dev pkgconf pkgconf-bin libpkgconf3 \
    python3-pytest python3-pluggy python3-iniconfig python3-packaging python3-py
ls -l

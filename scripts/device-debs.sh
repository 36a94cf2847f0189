#!/bin/sh
# scripts/device-debs.sh: fetch, on this Debian 12 machine, the packages that a lent GPU machine
# (the `device` tool's H100 / H200: Python 3.12 with torch, CUDA, CMake, no package registry)
# lacks to build sluice: libjpeg-turbo, libspng, zlib, jansson and cmocka with their headers, and
# pkgconf. They go to .device-debs/ (git-ignored), which a run carries there, where
# scripts/device-gpu.sh unpacks them beside the system, never over it. See docs/performance.md,
# "The GPU stage (issue 7)".
set -eu
cd "$(dirname "$0")/.."
mkdir -p .device-debs
cd .device-debs
rm -f ./*.deb
apt-get download libjpeg62-turbo libjpeg62-turbo-dev libspng0 libspng-dev zlib1g zlib1g-dev \
    libjansson4 libjansson-dev libcmocka0 libcmocka-dev pkgconf pkgconf-bin libpkgconf3
ls -l

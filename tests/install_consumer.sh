#!/usr/bin/env bash
# tests/install_consumer.sh BUILD_DIR SOURCE_DIR TREE: installs the build into a temporary
# prefix, builds examples/validate.c (the README's program) against it twice — through
# pkg-config and through find_package(sluice) — and runs it over TREE for one epoch.
set -euo pipefail
build=$1 src=$2 tree=$3
prefix=$(mktemp -d /tmp/sluice-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(dirname "$(find "$prefix" -name sluice.pc | head -n1)")
libdir=$(dirname "$(find "$prefix" -name 'libsluice.so' | head -n1)")

# pkg-config, shared library
PKG_CONFIG_PATH=$pc cc "$src/examples/validate.c" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs sluice) \
    -Wl,-rpath,"$libdir" -o "$prefix/validate"
"$prefix/validate" "$tree" > "$prefix/out.txt"
n=$(find "$tree" -name '*.jpg' | wc -l)
want=$(( (n + 63) / 64 ))
got=$(grep -c '^batch [0-9]*: 64 x 3x224x224 float32$' "$prefix/out.txt" || true)
if [ "$got" != "$want" ]; then
    echo "expected $want batches of 64 x 3x224x224 float32 for $n files, got:" >&2
    cat "$prefix/out.txt" >&2
    exit 1
fi

# CMake package, static library
mkdir -p "$prefix/consumer"
cat > "$prefix/consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(sluice REQUIRED)
add_executable(validate "$src/examples/validate.c")
target_link_libraries(validate PRIVATE sluice::sluice_static)
CMAKE
cmake -S "$prefix/consumer" -B "$prefix/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="${CC:-cc}" >/dev/null
cmake --build "$prefix/consumer/build" >/dev/null
"$prefix/consumer/build/validate" "$tree" | grep -c '^batch' | grep -qx "$want"
echo "install consumer ok: $want batches through pkg-config (shared) and find_package (static)"

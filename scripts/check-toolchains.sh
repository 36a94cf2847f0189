#!/bin/bash
# scripts/check-toolchains.sh [NVCC]: keeps sluice building on the toolchains users have, not only
# on Debian 12's (ctest entry `toolchains`, label portability; issue 14). Two checks, each a real
# compile of the project's own sources:
#
#  1. libjpeg-turbo's jpeg8 API (JPEG_LIB_VERSION 80, Ubuntu's libjpeg-turbo8-dev): Debian ships
#     the jpeg62 API, whose headers differ (jerror.h drops JERR_ARITH_NOTIMPL at >= 70, jpeglib.h
#     adds fields and functions at >= 70 / 80). A shadow jconfig.h that includes Debian's and
#     sets JPEG_LIB_VERSION makes the same headers take the jpeg7 and jpeg8 branches; every
#     source that includes jpeglib.h is compiled (-fsyntax-only -Werror) against them. Compiling
#     only: the struct layout differs, so nothing built this way is linked.
#  2. No header reachable from a .cu file needs C11 atomics: nvcc's front end rejects `_Atomic`
#     from <stdatomic.h> with GCC 13 as the host compiler, so `nvcc -M` of every .cu must not
#     list stdatomic.h. Skipped (exit 77, saying so) when there is no nvcc.
#
# Exits 0 when both hold, 1 naming the failing file otherwise, 77 when check 2 cannot run.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
nvcc=${1:-}
[ -n "$nvcc" ] || nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# --- 1. the jpeg7 / jpeg8 APIs -----------------------------------------------------------------
jpeg_cflags=$(pkg-config --cflags libjpeg 2>/dev/null)
mapfile -t jpeg_users < <(cd "$root" && grep -rl --include='*.c' '<jpeglib.h>' src bench cli tests | sort)
if [ ${#jpeg_users[@]} -eq 0 ]; then
    echo "toolchains: no source includes jpeglib.h; check 1 has nothing to compile" >&2
    exit 1
fi
for version in 70 80; do
    mkdir -p "$tmp/jpeg$version"
    printf '#include_next <jconfig.h>\n#undef JPEG_LIB_VERSION\n#define JPEG_LIB_VERSION %s\n' \
        "$version" >"$tmp/jpeg$version/jconfig.h"
    flags=(-std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Werror
           -fsyntax-only -I"$tmp/jpeg$version" -I"$root/include" -I"$root/src" $jpeg_cflags)
    # The shadow must be the jconfig.h that jpeglib.h sees, or this check proves nothing.
    printf '#include <stdio.h>\n#include <jpeglib.h>\n#include <jerror.h>\n_Static_assert(JPEG_LIB_VERSION == %s, "shadow jconfig.h not used");\n' \
        "$version" >"$tmp/probe.c"
    if ! "$cc" "${flags[@]}" "$tmp/probe.c"; then
        echo "toolchains: cannot make jpeglib.h take the JPEG_LIB_VERSION $version branch" >&2
        exit 1
    fi
    for src in "${jpeg_users[@]}"; do
        if ! "$cc" "${flags[@]}" "$root/$src" 2>"$tmp/err"; then
            echo "toolchains: $src does not compile against the jpeg$((version / 10)) API" \
                 "(JPEG_LIB_VERSION $version):"
            head -n 20 "$tmp/err"
            fail=1
        fi
    done
done
[ $fail -eq 0 ] && echo "toolchains: ${#jpeg_users[@]} jpeglib.h users compile against the jpeg7 and jpeg8 APIs"

# --- 2. no C11 atomics behind a .cu file ---------------------------------------------------------
if [ -z "$nvcc" ] || ! [ -x "$nvcc" ]; then
    echo "toolchains: SKIP check 2: no nvcc (PATH, /usr/local/cuda/bin)"
    [ $fail -eq 0 ] && exit 77
    exit 1
fi
mapfile -t cu_files < <(cd "$root" && find src -name '*.cu' | sort)
for cu in "${cu_files[@]}"; do
    if ! "$nvcc" -M -std=c++17 -DSLUICE_HAVE_CUDA=1 -I"$root/include" -I"$root/src" $jpeg_cflags \
         "$root/$cu" >"$tmp/deps" 2>"$tmp/err"; then
        echo "toolchains: nvcc -M $cu failed:"
        head -n 20 "$tmp/err"
        fail=1
    elif grep -q 'stdatomic\.h' "$tmp/deps"; then
        echo "toolchains: $cu reaches <stdatomic.h>, which nvcc rejects with GCC 13 as host compiler"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "toolchains: ${#cu_files[@]} .cu files reach no <stdatomic.h>"
exit $fail

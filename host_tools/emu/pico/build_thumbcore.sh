#!/usr/bin/env bash
# Build thumbcore.wasm (fix 8) from thumbcore.c with Debian's clang 14 and lld
# (apt-get install -y clang lld). The module is committed beside its source, so a machine
# without clang runs the Pico as it is; tests/host/test_pico_thumbcore.py rebuilds it and
# compares the bytes where this clang is installed.
#   host_tools/emu/pico/build_thumbcore.sh [OUT]   (default: thumbcore.wasm beside this)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/thumbcore.wasm}
command -v clang >/dev/null && command -v wasm-ld >/dev/null || {
  echo "no clang/wasm-ld: apt-get install -y clang lld" >&2; exit 3; }
# -nostdlib: no libc (the module allocates nothing); --no-entry: a library of exports;
# the module's memory holds the RP2040's SRAM, flash and bootrom (~17 MB, never grown).
clang --target=wasm32 -O2 -nostdlib -Wall -Wextra -Werror \
  -Wl,--no-entry -Wl,--export-dynamic -Wl,--strip-all \
  -o "$OUT" "$HERE/thumbcore.c"
echo "wrote $OUT ($(wc -c < "$OUT") bytes)"

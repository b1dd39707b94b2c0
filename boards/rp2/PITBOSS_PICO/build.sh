#!/usr/bin/env bash
# Build the pitboss image (this folder, an out-of-tree MicroPython board) from the offline
# sources in ../shared/firmware/ and the core patches in patches/, reproducibly
# (build-offline.sh pins SOURCE_DATE_EPOCH and the version strings), and put the UF2
# beside this recipe:
#
#   boards/rp2/PITBOSS_PICO/build.sh [--dir DIR] [--variant FROZEN] [--check]
#
#   --dir:   where to extract and build (default /tmp/pitboss-mpbuild; reused when it
#            already holds the sources, so a rebuild takes minutes, not ten)
#   --variant FROZEN: the release image (the firmware frozen into the core):
#            build/PITBOSS_PICO-FROZEN.uf2, and the digest of its sources beside it
#   --check: build and compare with the committed UF2 (exit 1 if the bytes differ)
#            instead of replacing it
# Needs: apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi cmake build-essential
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
DIR=/tmp/pitboss-mpbuild VARIANT= CHECK=
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) DIR=$2; shift 2 ;;
    --variant) VARIANT=$2; shift 2 ;;
    --check) CHECK=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
SHARED=
for d in "$REPO/.." "$REPO/../.." "$REPO/../../.."; do
  [ -x "$d/shared/firmware/build-offline.sh" ] && { SHARED=$(cd "$d/shared/firmware" && pwd); break; }
done
[ -n "$SHARED" ] || { echo "no shared/firmware/build-offline.sh above $REPO" >&2; exit 2; }
command -v arm-none-eabi-gcc >/dev/null || {
  echo "no ARM toolchain: apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi cmake build-essential" >&2; exit 3; }
mkdir -p "$DIR"
# The sources: the tarball, extracted once (a rebuild reuses the tree), with this board's
# patches to the MicroPython core (patches/, each saying why) applied on top. A tree
# patched with another set of patches is extracted again and its pitboss builds dropped
# (tar restores the files' old times, which make would not see as changed).
TARBALL=$SHARED/mp-rp2-v1.27.0-src.tar.xz
want_patches=$(cat "$HERE"/patches/*.patch | sha256sum | cut -d' ' -f1)
have_patches=$(cat "$DIR/.pitboss-patches" 2>/dev/null || echo none)
if [ ! -f "$DIR/micropython/py/mpconfig.h" ] || [ "$have_patches" != "$want_patches" ]; then
  echo "extracting $TARBALL into $DIR"
  tar -xJf "$TARBALL" -C "$DIR" --strip-components=1
  rm -rf "$DIR"/work/build-PITBOSS_PICO*
  for p in "$HERE"/patches/*.patch; do
    echo "patching the core: $(basename "$p")"
    patch -d "$DIR/micropython" -p1 --forward --quiet < "$p"
  done
  echo "$want_patches" > "$DIR/.pitboss-patches"
fi
args=(--dir "$DIR" --board-dir "$HERE")
[ -n "$VARIANT" ] && args+=(--variant "$VARIANT")
"$SHARED/build-offline.sh" "${args[@]}"
name=PITBOSS_PICO${VARIANT:+-$VARIANT}
if [ -n "$CHECK" ]; then
  if cmp "$DIR/out/$name.uf2" "$HERE/build/$name.uf2"; then echo "$name.uf2: identical to the committed image"
  else echo "$name.uf2: differs from the committed image" >&2; exit 1; fi
else
  mkdir -p "$HERE/build"
  cp "$DIR/out/$name.uf2" "$HERE/build/"
  # SHA256SUMS pins every committed image (host_tools/emu/pico checks the one it boots).
  (cd "$HERE/build" && sha256sum -- *.uf2 > SHA256SUMS)
  if [ "$VARIANT" = FROZEN ]; then
    # The release image holds the firmware itself: the digest of what it froze goes
    # beside it, and tests/static/test_release_image.py fails once the sources differ
    # (host_tools/deploy/release.py).
    (cd "$REPO" && python3 -m host_tools.deploy.release) > "$HERE/build/$name.sources"
  fi
  echo "wrote $HERE/build/$name.uf2 ($(sha256sum "$HERE/build/$name.uf2" | cut -d' ' -f1))"
fi

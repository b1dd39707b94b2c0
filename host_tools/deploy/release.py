"""The pitboss image's release variant (boards/rp2/PITBOSS_PICO/build.sh --variant
FROZEN): the firmware frozen into the core, so it boots without a ROMFS deploy and keeps
its code's names and bytecode out of the heap (docs/pitboss-image.md, docs/bench.md).

Its UF2 is committed beside the ROMFS image, so the emulated Pico and the tests run it
without an ARM toolchain. Because it holds the firmware itself, it goes stale with any
change of what it freezes: build.sh writes the digest of those sources beside it
(build/PITBOSS_PICO-FROZEN.sources), and tests/static/test_release_image.py fails, naming
the rebuild, when the sources no longer give that digest.

    python -m host_tools.deploy.release            the digest of the sources now
    python -m host_tools.deploy.release --check    exit 1 if the committed image is stale
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import host_tools

REPO = Path(host_tools.REPO)
BOARD_DIR = REPO / "boards" / "rp2" / "PITBOSS_PICO"
STAMP = BOARD_DIR / "build" / "PITBOSS_PICO-FROZEN.sources"
REBUILD = "boards/rp2/PITBOSS_PICO/build.sh --variant FROZEN"


def sources(root: Path = REPO) -> list[Path]:
    """What the release image freezes or is built from, sorted: firmware/manifest.py and
    every firmware module it lists (pitboss/, the simulation room excepted: no board gets
    it), boards/pico.py (frozen as the board), and the board folder (its own modules, C
    modules, configuration and manifests), its build output excepted."""
    fw = root / "firmware"
    out = [fw / "manifest.py", root / "boards" / "pico.py"]
    out += [p for p in (fw / "pitboss").rglob("*.py") if "sim" not in p.relative_to(fw).parts]
    board = root / "boards" / "rp2" / "PITBOSS_PICO"
    out += [p for p in board.rglob("*") if p.is_file() and not {"build", "__pycache__"}
            & set(p.relative_to(board).parts)]
    return sorted(set(out))


def digest(root: Path = REPO) -> str:
    """SHA-256 over each source's path (from the repository root) and bytes."""
    h = hashlib.sha256()
    for p in sources(root):
        rel = p.relative_to(root).as_posix().encode()
        data = p.read_bytes()
        h.update(b"%d:%s %d:" % (len(rel), rel, len(data)))
        h.update(data)
    return h.hexdigest()


def stale(root: Path = REPO) -> str | None:
    """Why the committed release image does not hold these sources, or None."""
    stamp = root / STAMP.relative_to(REPO)
    try:
        want = stamp.read_text().split()[0]
    except (OSError, IndexError):
        return "no %s: build the release image (%s)" % (stamp.name, REBUILD)
    if want != digest(root):
        return ("the committed release image (PITBOSS_PICO-FROZEN.uf2) was built from other "
                "sources than these: rebuild it (%s) and commit build/" % REBUILD)
    return None


if __name__ == "__main__":  # pragma: no cover - build.sh and people
    if sys.argv[1:] == ["--check"]:
        why = stale()
        print(why or "the release image holds these sources")
        sys.exit(1 if why else 0)
    print(digest())

"""The committed release image (boards/rp2/PITBOSS_PICO/build/PITBOSS_PICO-FROZEN.uf2)
holds the firmware frozen into it, so it must be rebuilt with every change of what it
freezes: the digest of its sources (host_tools/deploy/release.py) was written beside it
by build.sh, and must still be what the sources give."""
import shutil

from host_tools.deploy import release
from host_tools.emu.pico import RELEASE, find_firmware


def test_the_committed_release_image_holds_these_sources():
    assert release.stale() is None, release.stale()
    uf2, _, digest = find_firmware(RELEASE)  # pinned by the SHA256SUMS beside it
    assert uf2.name == "PITBOSS_PICO-FROZEN.uf2" and len(digest) == 64


def test_a_changed_source_makes_it_stale(tmp_path):
    """The check can fail: one byte of a firmware module changed, the digest differs."""
    root = tmp_path / "repo"
    for rel in ("firmware", "boards"):
        shutil.copytree(release.REPO / rel, root / rel,
                        ignore=shutil.ignore_patterns("__pycache__"))
    assert release.stale(root) is None
    p = root / "firmware" / "pitboss" / "loop.py"
    p.write_bytes(p.read_bytes() + b"\n")
    assert "rebuild it" in release.stale(root)
    # The simulation room is not frozen: a change there needs no rebuild.
    p.write_bytes(p.read_bytes()[:-1])
    sim = next((root / "firmware" / "pitboss" / "sim").glob("*.py"))
    sim.write_bytes(sim.read_bytes() + b"\n")
    assert release.stale(root) is None

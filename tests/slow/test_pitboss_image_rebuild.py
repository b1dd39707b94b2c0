"""The pitboss image (boards/rp2/PITBOSS_PICO) and its release variant rebuilt from
../shared/firmware/ byte for byte (the image's quick checks: tests/host/test_pitboss_image.py,
tests/static/test_release_image.py)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BOARD = REPO / "boards" / "rp2" / "PITBOSS_PICO"


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="no ARM toolchain (apt-get install gcc-arm-none-eabi "
                           "libnewlib-arm-none-eabi cmake build-essential): the committed "
                           "UF2 cannot be rebuilt here")
def test_the_committed_image_rebuilds_byte_for_byte(tmp_path):
    """boards/rp2/PITBOSS_PICO/build.sh --check: the image from ../shared/firmware's
    sources and this board folder, compared with the committed UF2 (8-10 min on a
    loaded 2-core machine; PITBOSS_MPBUILD names an extracted tree to reuse)."""
    d = os.environ.get("PITBOSS_MPBUILD") or str(tmp_path / "mpbuild")
    p = subprocess.run([str(BOARD / "build.sh"), "--dir", d, "--check"],
                       capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    assert "identical to the committed image" in p.stdout
    # The release image (the firmware frozen into the core) from the same tree.
    p = subprocess.run([str(BOARD / "build.sh"), "--dir", d, "--variant", "FROZEN",
                        "--check"], capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    assert "PITBOSS_PICO-FROZEN.uf2: identical to the committed image" in p.stdout

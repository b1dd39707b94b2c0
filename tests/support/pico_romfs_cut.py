"""A ROMFS deploy cut part way, on the emulated Pico running the pitboss image: the power
goes inside a flash erase, inside a page program, and after the last ROMFS write before
the manifest is completed (host_tools/deploy/romfs_deploy.py); each time the board comes back
answering every line with the firmware_mismatch tilt, never running a mix of the old and
the new code (the frozen main.py's check, boards/rp2/PITBOSS_PICO/modules). A deploy
that finishes then boots the new code and verifies. Used by tests/support/pico_tier.py (job
"romfs"); tests/pico/test_pico_board.py asserts on what it returns.

The "new" firmware is the repository's with one module changed (a snapshot tree passed to
`pitboss flash` as its root), so the ROMFS really differs from the one deployed before.
"""
import re
import shutil
import time
from pathlib import Path

from host_tools.deploy import flash as flashing
from host_tools import output as errors
from host_tools.deploy import verify
from host_tools.link.protolink import LinkError, ProtocolLink

MARK = "ROMFS_CUT_MARK"


def new_tree(base: Path, repo: Path) -> Path:
    """A copy of firmware/ and boards/ whose pitboss/__init__.py carries a new constant:
    a different .mpy, so a different ROMFS image."""
    tree = base / "tree-b"
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "build")
    shutil.copytree(repo / "firmware", tree / "firmware", ignore=ignore)
    shutil.copytree(repo / "boards", tree / "boards", ignore=ignore)
    init = tree / "firmware" / "pitboss" / "__init__.py"
    init.write_text(init.read_text() + "\n%s = 'b'\n" % MARK)
    return tree


def _first_answer(port, timeout=300):
    with ProtocolLink(port) as link:
        r = link.ready(timeout)
        return r, link.request("status", timeout=60)


def _deploy(pico, root, cut=None):
    """`pitboss flash` of the tree at `root`; cut=(where, keep): arm the power cut when
    the ROMFS deploy starts, `where(nblocks)` flash operations into it (mpremote erases
    every 4 KB block of the image first, then programs it 4 KB at a time)."""
    lines = []

    def progress(msg):
        lines.append(msg)
        m = re.match(r"romfs: mpremote romfs deploy \S+ \((\d+) bytes", msg)
        if m and cut:
            nblocks = (int(m.group(1)) + 4095) // 4096
            pico.ctl("cut", flash_ops=cut[0](nblocks), keep=cut[1])

    t0 = time.monotonic()
    try:
        flashing.flash(pico.port, progress=progress, root=root)
        err = None
    except (errors.FlashError, LinkError, OSError) as e:
        err = str(e)[-300:]
    return {"progress": lines, "error": err, "wall_s": time.monotonic() - t0}


def run_cuts(pico, repo: Path, base: Path):
    """The board at `pico` (tests.support.pico_tier.Pico) runs the repository's firmware, deployed
    by the tier's flash job. Returns what each cut left and the final deploy's result."""
    tree = new_tree(base, repo)
    # Provisioned, so every deploy also seals its manifest under the board's key (after a
    # soft reset: the old code's bytecode runs in place from the ROMFS a deploy rewrote).
    pico.connect()
    pico.conf.provision()
    pico.close()
    cuts = (
        ("erase", lambda n: n // 2, 2048),      # half-way through erasing, mid-sector
        ("program", lambda n: n + n // 2, 1000),  # half the image written, mid-page
        ("commit", lambda n: 2 * n, 0),          # ROMFS all new, manifest still pending
    )
    out = {"cuts": []}
    for name, where, keep in cuts:
        dep = _deploy(pico, tree, (where, keep))
        pico.close()
        pico.wait_off()
        pico.up()
        try:
            version, status = _first_answer(pico.port)
        except LinkError as e:
            version, status = {"error": str(e)}, None
        out["cuts"].append({"cut": name, "deploy": dep, "version": version,
                            "status": status})
    dep = _deploy(pico, tree)
    out["final"] = dep
    out["verify"] = [p for p in verify.verify(pico.port, progress=None,
                                              root=tree).problems]
    pico.connect()
    out["mark"] = pico.board.exec("import pitboss\nprint(getattr(pitboss, %r, None))"
                                  % MARK).strip()
    pico.close()
    # Back to the repository's code over the running new one: a whole ROMFS rewritten on
    # a provisioned board, sealed, and the table boots with no tilt.
    out["back"] = _deploy(pico, repo)
    _, out["back_status"] = _first_answer(pico.port)
    out["damaged"] = damaged_littlefs(pico)
    return out


def damaged_littlefs(pico):
    """The image's _boot.py never formats a littlefs that is there but does not mount:
    both superblock copies damaged after their magic, the board boots into the tilt
    naming it (no ROMFS code runs); the bytes put back, it boots the table again with
    everything on littlefs (the key, the manifest) as it was."""
    from host_tools.deploy.romfs_deploy import layout
    L = layout()
    at = L["CODE_BYTES"] + L["ROMFS_BYTES"] + L["LFS_START"]  # offset in flash.bin
    path = Path(pico.flash) / "flash.bin"
    pico.stop()
    data = bytearray(path.read_bytes())
    saved = bytes(data[at:at + 8192])
    for blk in (0, 4096):
        data[at + blk + 16:at + blk + 256] = b"\x55" * 240
    version = _boot_with(pico, path, data)
    data[at:at + 8192] = saved
    restored = _boot_with(pico, path, data)
    return {"version": version, "restored": restored}


def _boot_with(pico, path, data):
    """Power on with `data` as the flash; the answer to the first line, then off."""
    path.write_bytes(bytes(data))
    pico.up()
    try:
        return _first_answer(pico.port)[0]
    except LinkError as e:
        return {"error": str(e)}
    finally:
        pico.stop()

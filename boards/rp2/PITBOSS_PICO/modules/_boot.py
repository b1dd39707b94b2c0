# The pitboss image's filesystem set-up, run by the port before boot.py/main.py at every
# reset (frozen: ports/rp2/main.c runs the frozen _boot.py). Unlike the stock one it
#  - mounts littlefs on its own part of the storage area only (pitboss_layout: LFS), never
#    on the raw journal region beside it nor on the ROMFS below it;
#  - formats only a part that holds no littlefs at all (erased, or another image's bytes,
#    e.g. a Pico that ran the stock image): a littlefs that is there but will not mount
#    (damaged) is left alone, unmounted, so nothing on it is lost. Which of the three it
#    was is left in pitboss_program.lfs (the USB serial is not up yet: main.py prints
#    it), and a damaged one is a firmware_mismatch tilt there (no ROMFS code runs);
#  - leaves littlefs ('' and /lib) off sys.path: the image's frozen modules and the
#    ROMFS (/rom, /rom/lib, mounted by the runtime before this runs) are all it imports,
#    and on the release image (the firmware frozen into the core) the frozen modules
#    alone. Nothing on littlefs can shadow the firmware (the boot check tilts on code
#    there anyway), and no import pays for littlefs: MicroPython looks an extensible
#    built-in module (json, time, os, struct...) up on every sys.path entry, at every
#    import statement that runs, before it takes the built-in, and a littlefs lookup
#    reads and CRCs its directory's metadata (`import pitboss.app` on the release image:
#    323 ms of chip time, ~150 ms of it in littlefs).
import sys
import rp2
import vfs
import pitboss_layout as _L
import pitboss_program as _P


def _mount():
    bdev = rp2.Flash(start=_L.LFS_START, len=_L.LFS_BYTES)
    at = _L.FLASH_BASE + _L.CODE_BYTES + _L.ROMFS_BYTES + _L.LFS_START
    try:
        return vfs.VfsLfs2(bdev, progsize=256)
    except OSError as e:
        err = e
    # littlefs keeps its superblock in block 0 or 1, the name "littlefs" 8 bytes in.
    mem = memoryview(bdev)
    if bytes(mem[8:16]) == b"littlefs" or bytes(mem[4096 + 8:4096 + 16]) == b"littlefs":
        _P.lfs = "damaged: littlefs at 0x%x does not mount (%s): left as it is, not " \
            "formatted" % (at, err)
        return None
    vfs.VfsLfs2.mkfs(bdev, progsize=256)
    _P.lfs = "formatted: no littlefs at 0x%x: formatted %d KB" % (at, _L.LFS_BYTES // 1024)
    return vfs.VfsLfs2(bdev, progsize=256)


_P.lfs = "mounted"
_fs = _mount()
if _fs is not None:
    vfs.mount(_fs, "/")
sys.path[:] = [".frozen"] if _P._frozen() else [".frozen", "/rom", "/rom/lib"]
del _fs, _mount, sys, rp2, vfs, _L, _P

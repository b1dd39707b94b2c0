# The filesystem as the persistent modules (journal, slots, meters, tilt, auth) use it:
# OsFS wraps the real one (board flash, or a host folder) behind a few methods, so tests
# inject an object with the same methods that can cut power after any byte
# (tests/support/powercut_fs.py); makedirs/write_file/readfull are the durable-write and
# short-read helpers they share. Nothing here knows a file format.
import os


def as_bytes(data, what):
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError("%s must be str or bytes, not %s" % (what, type(data).__name__))


class OsFS:
    """The real filesystem (board flash, or a host folder). Tests inject an object with
    the same methods that can cut power after any byte. Paths are used as given."""

    def __init__(self, durable=True):
        # durable=False skips fsync on CPython (tests on tmp dirs); the board always syncs.
        self.durable = durable

    def open(self, path, mode):
        return open(path, mode)

    def listdir(self, path):
        return os.listdir(path)

    def size(self, path):
        """Size in bytes, or -1 if the path does not exist."""
        try:
            return os.stat(path)[6]
        except OSError:
            return -1

    def isdir(self, path):
        try:
            return bool(os.stat(path)[0] & 0x4000)
        except OSError:
            return False

    def remove(self, path):
        os.remove(path)

    def rename(self, old, new):
        # os.replace where it exists (CPython: atomic, also on Windows); MicroPython's
        # rename replaces an existing target (littlefs atomically, FAT remove+rename).
        getattr(os, "replace", os.rename)(old, new)

    def mkdir(self, path):
        os.mkdir(path)

    def fsync(self, f):
        """Make what was written to the open file f durable."""
        f.flush()
        if not self.durable:
            return
        fs = getattr(os, "fsync", None)
        if fs is not None and hasattr(f, "fileno"):
            fs(f.fileno())  # CPython
        else:
            _os_sync()  # MicroPython: flushes every mounted filesystem

    def sync_dir(self, path):
        """Make creates/renames/removes in directory `path` durable."""
        if not self.durable:
            return
        o = getattr(os, "open", None)
        if o is not None and hasattr(os, "fsync"):  # CPython (POSIX)
            try:
                fd = o(path, os.O_RDONLY)  # pyright: ignore
            except OSError:
                return
            try:
                os.fsync(fd)  # pyright: ignore
            except OSError:
                pass  # not every OS lets a directory be fsynced
            finally:
                os.close(fd)  # pyright: ignore
        else:
            _os_sync()


def _os_sync():
    s = getattr(os, "sync", None)  # absent on the WebAssembly port (in-memory FS)
    if s is not None:
        s()


def makedirs(fs, path):
    """Create `path` and its parents; an existing directory is fine."""
    if not path or fs.isdir(path):
        return
    i = path.rfind("/")
    if i > 0:
        makedirs(fs, path[:i])
    try:
        fs.mkdir(path)
    except OSError:
        if not fs.isdir(path):
            raise


def write_file(fs, path, data, parent):
    """Replace the file's contents with data (bytes, or a tuple of pieces written in
    order), durably (open, write, sync, close, sync the directory). A cut part-way leaves
    a prefix (FAT) or the old file (littlefs)."""
    f = fs.open(path, "wb")
    try:
        if type(data) is tuple:
            for piece in data:
                f.write(piece)
        else:
            f.write(data)
        fs.fsync(f)
    finally:
        f.close()
    fs.sync_dir(parent)


def readfull(f, mv):
    """Fill memoryview mv from f; returns the number of bytes read (short only at EOF)."""
    got = 0
    n = len(mv)
    while got < n:
        k = f.readinto(mv[got:])
        if not k:
            break
        got += k
    return got

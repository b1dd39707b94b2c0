"""An in-memory filesystem with pitboss.store.osfs.OsFS's interface that can lose power.

Every byte written costs one unit, every metadata step (create, truncate, rename,
remove, mkdir, a sync) costs one; `cut_after(k)` lets k units happen and raises PowerCut
at the next one (a write is cut part-way: its first bytes land). After a cut every call
raises PowerCut until `reboot()`, like a board that has lost power.

Two models of what a cut leaves:
- "prefix" (pessimistic, FAT-like): bytes and metadata land in program order as they are
  written; "wb" truncates at open.
- "cow" (littlefs-like): a file's new contents appear only at flush/fsync/close; a cut
  before that leaves the old contents (creation of the name is immediate, as in littlefs).
fat_rename=True makes rename over an existing file two steps (remove, then rename), as
MicroPython's FAT driver does.
"""
import copy


class PowerCut(BaseException):
    # BaseException: firmware code that catches Exception/OSError must not swallow it.
    pass


class MemFS:
    def __init__(self, mode="prefix", fat_rename=False):
        assert mode in ("prefix", "cow")
        self.mode = mode
        self.fat_rename = fat_rename
        self.files = {}
        self.dirs = {"/"}
        self.left = None  # units left before the cut; None = unlimited
        self.dead = False
        self.units = 0  # units spent since the last reset_count()

    # ---- power ----
    def cut_after(self, k):
        self.left = k

    def reboot(self):
        self.dead = False
        self.left = None

    def clone(self):
        c = MemFS(self.mode, self.fat_rename)
        c.files = copy.deepcopy(self.files)
        c.dirs = set(self.dirs)
        return c

    def _alive(self):
        if self.dead:
            raise PowerCut("no power")

    def _spend(self, n=1):
        """Spend up to n units; returns how many were allowed (cutting power if < n)."""
        self._alive()
        if self.left is None:
            self.units += n
            return n
        k = min(n, self.left)
        self.left -= k
        self.units += k
        return k

    def _cut(self):
        self.dead = True
        raise PowerCut("power cut")

    def _step(self):
        if self._spend(1) < 1:
            self._cut()

    # ---- the OsFS interface ----
    @staticmethod
    def _parent(path):
        i = path.rfind("/")
        return path[:i] if i > 0 else "/"

    def open(self, path, mode):
        self._alive()
        if self._parent(path) not in self.dirs:
            raise OSError(2, "no such directory", path)
        if "r" in mode:
            if path not in self.files:
                raise OSError(2, "no such file", path)
            return _File(self, path, "r")
        if path not in self.files:
            self._step()
            self.files[path] = bytearray()
        elif "w" in mode and self.mode == "prefix":
            self._step()
            del self.files[path][:]
        return _File(self, path, "w" if "w" in mode else "a")

    def listdir(self, path):
        self._alive()
        if path not in self.dirs:
            raise OSError(2, "no such directory", path)
        pre = path.rstrip("/") + "/"
        out = [p[len(pre):] for p in list(self.files) + list(self.dirs)
               if p.startswith(pre) and "/" not in p[len(pre):] and p != path]
        return sorted(out)

    def size(self, path):
        self._alive()
        if path in self.files:
            return len(self.files[path])
        return 0 if path in self.dirs else -1

    def isdir(self, path):
        self._alive()
        return path in self.dirs

    def remove(self, path):
        self._alive()
        if path not in self.files:
            raise OSError(2, "no such file", path)
        self._step()
        del self.files[path]

    def rename(self, old, new):
        self._alive()
        if old not in self.files:
            raise OSError(2, "no such file", old)
        if self.fat_rename and new in self.files:
            self._step()
            del self.files[new]
        self._step()
        self.files[new] = self.files.pop(old)

    def mkdir(self, path):
        self._alive()
        if path in self.dirs or path in self.files:
            raise OSError(17, "exists", path)
        if self._parent(path) not in self.dirs:
            raise OSError(2, "no such directory", path)
        self._step()
        self.dirs.add(path)

    def fsync(self, f):
        f.flush()
        self._step()

    def sync_dir(self, path):
        self._step()


class _File:
    def __init__(self, fs, path, how):
        self.fs = fs
        self.path = path
        self.name = path
        self.how = how
        self.pos = 0
        self.pending = None if how == "r" else bytearray()
        self.closed = False

    # reading
    def _data(self):
        self.fs._alive()
        return self.fs.files.get(self.path, b"")

    def read(self, n=-1):
        d = self._data()
        end = len(d) if n is None or n < 0 else min(len(d), self.pos + n)
        out = bytes(d[self.pos:end])
        self.pos = max(self.pos, end)
        return out

    def readinto(self, buf):
        d = self._data()
        k = max(0, min(len(buf), len(d) - self.pos))
        buf[:k] = d[self.pos:self.pos + k]
        self.pos += k
        return k

    def seek(self, off, whence=0):
        d = self._data()
        self.pos = off if whence == 0 else (self.pos + off if whence == 1 else len(d) + off)
        return self.pos

    def tell(self):
        return self.pos

    # writing
    def write(self, data):
        if self.closed:
            raise ValueError("write to closed file %s" % self.path)  # as CPython's
        fs = self.fs
        data = bytes(data)
        k = fs._spend(len(data))
        if fs.mode == "prefix":
            fs.files[self.path] += data[:k]
        else:
            self.pending += data[:k]
        if k < len(data):
            self.pending = bytearray()  # cow: what was not committed is gone
            fs._cut()
        return len(data)

    def flush(self):
        self.fs._alive()
        if self.fs.mode == "cow" and self.pending is not None and \
                (self.pending or self.how == "w"):
            self.fs._step()
            if self.how == "w":
                self.fs.files[self.path] = bytearray(self.pending)
                self.how = "a"  # later flushes append to what is now there
            else:
                self.fs.files[self.path] += self.pending
            self.pending = bytearray()

    def close(self):
        if self.closed:
            return
        self.closed = True
        if self.fs.dead:
            return
        self.flush()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

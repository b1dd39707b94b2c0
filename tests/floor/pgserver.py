"""A PostgreSQL server of the tests' own: initdb into a temp folder, started on a unix
socket and a loopback port, stopped at the end. Debian's `postgresql` package (installed
by ./dev setup as root) provides the binaries; as root the server runs as the
`postgres` user (PostgreSQL refuses to run as root)."""
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time


def binaries():
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(d, "initdb")):
            return d
    path = shutil.which("initdb")
    return os.path.dirname(path) if path else None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self, durable=False):
        """durable=False: fsync off (the tests' throw-away data); True for figures."""
        self.bin = binaries()
        if self.bin is None:
            raise RuntimeError("no PostgreSQL server binaries (initdb): ./dev setup "
                               "installs Debian's postgresql as root")
        self.dir = tempfile.mkdtemp(prefix="pitboss-pg-")
        self.data = os.path.join(self.dir, "data")
        self.port = _free_port()
        self.as_user = []
        if os.geteuid() == 0:
            os.chown(self.dir, *_ids("postgres"))
            os.chmod(self.dir, 0o700)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "pitboss", "-E", "UTF8",
                  "--no-sync")
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w",
                  "-o", "-k %s -p %d -h 127.0.0.1%s" % (self.dir, self.port,
                                                       "" if durable else " -F"),
                  "start")
        self.url_base = "postgresql://pitboss@127.0.0.1:%d/" % self.port
        self._n = 0

    def _run(self, tool, *args):
        r = subprocess.run(self.as_user + [os.path.join(self.bin, tool)] + list(args),
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            raise RuntimeError("%s failed: %s %s" % (tool, r.stdout[-500:], r.stderr[-500:]))
        return r

    def new_database(self):
        """A URL of an empty database of its own."""
        import psycopg
        self._n += 1
        name = "floor_%d_%d" % (os.getpid(), self._n)
        with psycopg.connect(self.url_base + "postgres", autocommit=True) as c:
            c.execute("CREATE DATABASE %s" % name)
        return self.url_base + name

    def stop(self):
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def _ids(user):
    import pwd
    p = pwd.getpwnam(user)
    return p.pw_uid, p.pw_gid


def wait_port(port, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False

"""A floor run for the tests and the scale bench (tests/floor, host_tools.floor.bench):
floor simulator processes (the real firmware on CPython behind ptys,
host_tools.floor.simfloor) and the collector as a process of its own (`pitboss
collect`), with what it takes to cut their power (kill -9) and read the truth back from
the boards' own flash."""
import json
import os
import signal
import subprocess
import sys
import time

import host_tools

# Where host_tools is imported from (a checkout, or site-packages): what the processes
# need on their path, with firmware/ for a checkout that was never installed.
PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(host_tools.__file__)))
REPO = host_tools.REPO


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([PKG_ROOT] + host_tools.checkout_paths()
                                      + [e.get("PYTHONPATH", "")])
    return e


class Proc:
    def __init__(self, args, log):
        self.args = args
        self.log = log
        self.p = None

    def start(self):
        out = open(self.log, "a")
        self.p = subprocess.Popen([sys.executable] + self.args, cwd=PKG_ROOT, env=env(),
                                  stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        out.close()
        return self

    def kill9(self):
        """A power cut: nothing of the process's runs after it."""
        if self.p is not None and self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGKILL)
            self.p.wait()

    def stop(self, timeout=20):
        if self.p is not None and self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill9()

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def rss_kb(self):
        try:
            with open("/proc/%d/status" % self.p.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None


def sim(folder, prefix, n, first, rounds, seed=1, pace=0.05, tilt_every=0, tilt_hold=1.0):
    return Proc(["-m", "host_tools.floor.simfloor", "--dir", str(folder), "--prefix", prefix,
                 "--tables", str(n), "--first", str(first), "--rounds", str(rounds),
                 "--seed", str(seed), "--pace", str(pace), "--tilt-every", str(tilt_every),
                 "--tilt-hold", str(tilt_hold)],
                os.path.join(str(folder), "sim-%s.log" % prefix))


def wait_sim(folder, prefix, timeout=60):
    """The simulator's state once every table of it answers (its PREFIX.json)."""
    path = os.path.join(str(folder), "%s.json" % prefix)
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        time.sleep(0.1)
    raise TimeoutError("the floor simulator %s did not start" % prefix)


def write_config(path, tables, db, keys, http=""):
    lines = ['[floor]', 'db = %s' % json.dumps(str(db)), 'keys = %s' % json.dumps(str(keys)),
             'http = %s' % json.dumps(http), 'poll = 0.3', 'backoff_max = 2.0', '']
    for ident, port in tables:
        lines += ['[[table]]', 'id = %s' % json.dumps(ident), 'port = %s' % json.dumps(port),
                  '']
    with open(path, "w") as f:
        f.write("\n".join(lines))


def collector(config, log, seconds=None):
    args = ["-m", "host_tools", "collect", "--config", str(config)]
    if seconds:
        args += ["--seconds", str(seconds)]
    return Proc(args, str(log))


def board_ack(root):
    """The last seq the board acknowledged, from its commit record on flash."""
    from pitboss.store.slots import Slots
    data = Slots(os.path.join(str(root), "journal", "commit"), max_size=256).load()
    return json.loads(data)["ack"] if data else 0


def journal_rounds(root):
    """{seq: (kind of end, round)} of every settle and void the board's journal holds,
    and its last seq, read from its flash (the process must be stopped)."""
    from pitboss.store.journal import Journal
    j = Journal(os.path.join(str(root), "journal"), snapshot=lambda s: "snap", commit=True,
                retain=True, segment_size=65536, keep=10, max_payload=6144)
    j.open()
    out = {}
    payloads = {}
    for seq, kind, payload in j.records(1):
        payloads[seq] = bytes(payload).decode()
        if kind == 0x52 and (b'"ev":"settle"' in payload or b'"ev":"void"' in payload):
            ev = json.loads(bytes(payload))
            out[seq] = (ev["ev"], ev["round"])
    return out, payloads, j.last_seq


def percentile(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]

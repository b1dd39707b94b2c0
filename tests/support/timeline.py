"""When the background jobs ran and how long the foreground waited for each, printed at
the end of a run (conftest.py's terminal summary).

CI has 15 minutes on two cores, and its wall time is set by how the foreground tests,
the virtual board's background jobs (tests/support/background.py) and the emulated Pico's jobs
(tests/support/pico_tier.py) overlap, not by their sum: this is the measurement to tune it by.
"""
import contextlib
import threading
import time

T0 = time.monotonic()
_lock = threading.Lock()
_jobs = []    # (thread, job, start s, end s, outcome)
_waits = {}   # job -> seconds the foreground spent waiting for its result


@contextlib.contextmanager
def job(thread, name):
    t0 = time.monotonic()
    outcome = "failed"
    try:
        yield
        outcome = "ok"
    finally:
        with _lock:
            _jobs.append((thread, name, t0 - T0, time.monotonic() - T0, outcome))


@contextlib.contextmanager
def waiting(name):
    t0 = time.monotonic()
    try:
        yield
    finally:
        with _lock:
            _waits[name] = _waits.get(name, 0.0) + time.monotonic() - t0


def report(write):
    """write(line) for each job: thread, name, start..end (s from collection), outcome,
    and the foreground's wait for it."""
    with _lock:
        jobs, waits = list(_jobs), dict(_waits)
    if not jobs:
        return
    write("background jobs (seconds from the start of the session; the foreground's "
          "wait for each):")
    for thread, name, t0, t1, outcome in sorted(jobs, key=lambda j: j[2]):
        write("  %-10s %-9s %6.1f .. %6.1f  (%5.1f s) %-6s waited %5.1f s" % (
            thread, name, t0, t1, t1 - t0, outcome, waits.get(name, 0.0)))
    write("  session so far: %.1f s" % (time.monotonic() - T0))

"""Long board jobs run in the background from the end of collection.

A board job is mostly a Node process (the WebAssembly VM or the emulated Pico) working
while pytest waits on its serial port, so on CI's two cores the suite's wall time is set
by how the long jobs are spread, not by their sum. A test marked
`@pytest.mark.background("job")` takes its job's result with `Background.result("job")`;
the job starts (in this thread, one job after another) as soon as collection has found a
test that needs it, while the rest of the suite runs. The emulated Pico's own jobs have
their own thread (tests/support/pico_tier.py): this one holds the virtual-board jobs.

A job is a function `job(base_dir) -> result` (picklable), named in JOBS. Each runs in a
worker process (one for all the jobs, started from a forkserver), not in this one: the
foreground patches module state (tests/board/test_flash.py patches host_tools.deploy.mpremote_steps.describe,
tests/host/test_tables.py the evaluator's tables) that a job here would otherwise use.
"""
import concurrent.futures
import importlib
import shutil
import tempfile
import threading
from pathlib import Path

from tests.support import timeline

# job name -> "module:function"
JOBS = {
    "seeded": "tests.support.seeded_rounds:job",
    "e2e": "tests.support.board_e2e:job",
}


class Background:
    _instance = None
    _lock = threading.Lock()

    @classmethod
    def start(cls, jobs):
        with cls._lock:
            if cls._instance is None and jobs:
                cls._instance = cls(jobs)
            return cls._instance

    @classmethod
    def result(cls, job, timeout=1800):
        with cls._lock:
            if cls._instance is None:  # e.g. a test run by itself: start just this job
                cls._instance = cls([job])
            inst = cls._instance
        fut = inst.futures.get(job)
        if fut is None:
            raise RuntimeError("background job %r was not started (marker missing?)" % job)
        with timeline.waiting(job):
            return fut.result(timeout)

    @classmethod
    def shutdown(cls):
        with cls._lock:
            if cls._instance is not None:
                inst = cls._instance
                inst.thread.join(5)
                if inst.pool is not None:
                    # A job still running is killed with its worker; its board sees its
                    # owner gone and stops (vboard's parent_pid) or is left to the OS.
                    inst.pool.terminate()
                shutil.rmtree(inst.base, ignore_errors=True)

    def __init__(self, jobs):
        unknown = set(jobs) - set(JOBS)
        if unknown:
            raise RuntimeError("unknown background job(s): %s" % ", ".join(sorted(unknown)))
        self.jobs = [j for j in JOBS if j in jobs]
        self.futures = {j: concurrent.futures.Future() for j in self.jobs}
        self.base = Path(tempfile.mkdtemp(prefix="pitboss-background-"))
        self.pool = None
        self.thread = threading.Thread(target=self._run, name="background", daemon=True)
        self.thread.start()

    def _run(self):
        from host_tools import process_pool
        self.pool = process_pool(1)
        for job in self.jobs:
            try:
                with timeline.job("background", job):
                    self.futures[job].set_result(
                        self.pool.apply(_run_job, (JOBS[job], str(self.base / job))))
            except BaseException as e:  # the test that asks reports it
                self.futures[job].set_exception(e)


def _run_job(where, base):
    """In the worker process: JOBS' "module:function" on its base folder."""
    mod, _, fn = where.partition(":")
    return getattr(importlib.import_module(mod), fn)(Path(base))

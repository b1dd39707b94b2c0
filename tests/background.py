"""Long board jobs run in the background from the end of collection.

A board job is mostly a Node process (the WebAssembly VM or the emulated Pico) working
while pytest waits on its serial port, so on CI's two cores the suite's wall time is set
by how the long jobs are spread, not by their sum. A test marked
`@pytest.mark.background("job")` takes its job's result with `Background.result("job")`;
the job starts (in this thread, one job after another) as soon as collection has found a
test that needs it, while the rest of the suite runs. The emulated Pico's own jobs have
their own thread (tests/pico_tier.py): this one holds the virtual-board jobs.

A job is a function `job(base_dir) -> result`, named in JOBS; it must not share module
state with the foreground (the CPython reference runs in a subprocess for that reason:
boards.virtual's simulated peripherals are process-wide).
"""
import concurrent.futures
import importlib
import shutil
import tempfile
import threading
from pathlib import Path

from tests import timeline

# job name -> "module:function"
JOBS = {
    "seeded": "tests.seeded_rounds:job",
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
                cls._instance.thread.join(5)
                shutil.rmtree(cls._instance.base, ignore_errors=True)

    def __init__(self, jobs):
        unknown = set(jobs) - set(JOBS)
        if unknown:
            raise RuntimeError("unknown background job(s): %s" % ", ".join(sorted(unknown)))
        self.jobs = [j for j in JOBS if j in jobs]
        self.futures = {j: concurrent.futures.Future() for j in self.jobs}
        self.base = Path(tempfile.mkdtemp(prefix="pitboss-background-"))
        self.thread = threading.Thread(target=self._run, name="background", daemon=True)
        self.thread.start()

    def _run(self):
        for job in self.jobs:
            mod, _, fn = JOBS[job].partition(":")
            try:
                func = getattr(importlib.import_module(mod), fn)
                with timeline.job("background", job):
                    self.futures[job].set_result(func(self.base / job))
            except BaseException as e:  # the test that asks reports it
                self.futures[job].set_exception(e)

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (REPO, os.path.join(REPO, "firmware")):
    if path not in sys.path:
        sys.path.insert(0, path)


# ---- the emulated Pico's board tier (tests/pico_tier.py) -----------------------------
# Its jobs start in the background as soon as collection finds a Pico test, so the
# emulator (a Node process) works while the rest of the suite runs on the other core.
def pytest_collection_finish(session):
    jobs = set()
    for item in session.items:
        m = item.get_closest_marker("pico")
        if m is not None:
            jobs.update(m.args)
    if jobs:
        from tests.pico_tier import PicoTier
        PicoTier.get(jobs)


def pytest_sessionfinish(session, exitstatus):
    mod = sys.modules.get("tests.pico_tier")
    if mod is not None:
        mod.PicoTier.shutdown()


def pytest_configure(config):
    config.addinivalue_line("markers", "pico: runs on the emulated Raspberry Pi Pico "
                            "(tests/pico_tier.py)")

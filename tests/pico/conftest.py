"""The emulated Pico's tests: board tier (tests/support/tiers.py). Its jobs
(tests/support/pico_tier.py) start in the background as soon as collection finds a test
that names one (`@pytest.mark.pico("job")`), so the emulator (a Node process) works while
the rest of the suite runs on the other core."""
from tests.support.tiers import assign, job_hooks

pytest_itemcollected = assign("board")
pytest_collection_finish, pytest_sessionfinish = job_hooks(
    "pico", "tests.support.pico_tier", "PicoTier", "get")

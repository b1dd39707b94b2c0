"""The board tier (tests/support/tiers.py): every test under tests/board/, and the
virtual board's long jobs (tests/support/background.py), started on a thread of their own
as soon as collection finds a test that needs one (`@pytest.mark.background("job")`)."""
from tests.support.tiers import assign, job_hooks

pytest_itemcollected = assign("board")
pytest_collection_finish, pytest_sessionfinish = job_hooks(
    "background", "tests.support.background", "Background", "start")

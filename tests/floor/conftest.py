"""The floor's tests (issue 31): one tier, `floor` (SQLite, a PostgreSQL server the
tests start themselves, the collector and its floor simulator on ptys, headless
Chromium). The same store and collector tests run against SQLite and PostgreSQL
(`floor_db`, parametrized)."""
import pytest

from tests.floor.pgserver import PgServer
from tests.support.tiers import assign

pytest_itemcollected = assign("floor")


@pytest.fixture(scope="session")
def pg_server():
    try:
        server = PgServer()
    except (RuntimeError, OSError) as e:
        pytest.skip("PostgreSQL: %s" % e)
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def floor_db(request, tmp_path):
    """A database URL, empty: an SQLite file, or a database on the tests' own server."""
    if request.param == "sqlite":
        return str(tmp_path / "floor.sqlite")
    return request.getfixturevalue("pg_server").new_database()

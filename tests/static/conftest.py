"""The static tier (tests/support/tiers.py): every test under tests/static/."""
from tests.support.tiers import assign

pytest_itemcollected = assign("static")

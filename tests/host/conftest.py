"""The host tier (tests/support/tiers.py): every test under tests/host/."""
from tests.support.tiers import assign

pytest_itemcollected = assign("host")

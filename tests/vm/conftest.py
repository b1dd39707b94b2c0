"""The vm tier (tests/support/tiers.py): every test under tests/vm/."""
from tests.support.tiers import assign

pytest_itemcollected = assign("vm")

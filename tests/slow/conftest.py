"""The slow tier (tests/support/tiers.py): every test under tests/slow/."""
from tests.support.tiers import assign

pytest_itemcollected = assign("slow")

"""What a board runs, as files: every module of firmware/ and boards/*.py. The static
tier checks each (tests/static/test_static_checks.py), the host tier their imports
(tests/host/test_board_imports.py)."""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def board_sources():
    files = sorted((REPO / "firmware").rglob("*.py")) + sorted((REPO / "boards").glob("*.py"))
    return [f for f in files if "__pycache__" not in f.parts]

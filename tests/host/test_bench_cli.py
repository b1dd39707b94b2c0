"""`pitboss bench`'s command line: the options it takes and what it refuses before a run
(the harness itself runs in tests/board/test_bench.py)."""
import os

import pytest

from host_tools.bench import cli as bench


def test_the_cli_parser_takes_the_bench_options():
    import argparse
    ap = argparse.ArgumentParser()
    bench.add_bench_commands(ap.add_subparsers(dest="command"))
    a = ap.parse_args(["bench", "--port", "virtual", "--quick", "--save", "x.json",
                       "--plot", "x.png", "--markdown", "x.md", "--exact", "--json"])
    assert (a.port, a.quick, a.save, a.json, a.plot, a.markdown, a.exact, a.func) == (
        "virtual", True, "x.json", True, "x.png", "x.md", True, bench.cmd_bench)
    # Issue 29 item 10: the two -only options exclude each other (both printed empty
    # tables), and an output file in a missing folder is refused before the run.
    with pytest.raises(SystemExit):
        ap.parse_args(["bench", "--cpython-only", "--board-only"])
    a = ap.parse_args(["bench", "--save", "/nonexistent-pitboss/x.json"])
    assert bench.cmd_bench(a) == 2 and not os.path.exists("/nonexistent-pitboss")

"""The emulated Pico's table-driven instruction decoder (host_tools/emu/pico/fastcore.mjs,
fix 7) decodes and executes as rp2040js's own if/else chain does: the branch taken for
every first halfword (and every second one where it decides), and 300,000 random
instructions run on both cores from the same state (tests/support/fastcore_check.mjs)."""
import json
import os
import subprocess

from host_tools.emu.vm.runner import ensure_node_modules, find_node, repo_root

CHECK = repo_root() / "tests" / "support" / "fastcore_check.mjs"


def test_table_decoder_matches_rp2040js_chain():
    env = dict(os.environ, PITBOSS_NODE_MODULES=str(ensure_node_modules()))
    p = subprocess.run([find_node(), str(CHECK)], capture_output=True, text=True, env=env,
                       timeout=300)
    lines = p.stdout.strip().splitlines()
    assert lines, p.stderr[-2000:]
    got = json.loads(lines[-1])
    assert got["ok"], got["error"]
    assert p.returncode == 0
    # rp2040js 1.4.1's chain: 83 encodings and the final else (UDF); a different count
    # means a different rp2040js, whose chain this check must be re-read against.
    assert got["branches"] == 84
    assert got["executed"] == 300000
    assert got["branches_executed"] >= 78  # the random stream reaches nearly every branch

"""Issue 29 item 4: the README's command table is the CLI's: every command and every
option `--help` shows is in the table, and nothing else is (a table that drifted from
the tool was how `board status --flash-dir` came to be documented and refused)."""
import os
import re

from host_tools.cli import build_parser

README = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "README.md")


def _subparsers(p):
    return [a for a in p._actions if a.__class__.__name__ == "_SubParsersAction"]


def from_help():
    """{"pitboss CMD [SUB]": [options and positionals as the table writes them]}."""
    out = {}

    def opts(p):
        got = []
        for a in p._actions:
            if "-h" in a.option_strings or a.__class__.__name__ == "_SubParsersAction":
                continue
            got.append("/".join(sorted(a.option_strings, key=len)) if a.option_strings
                       else (a.metavar or a.dest).upper())
        return got

    for name, p in _subparsers(build_parser())[0].choices.items():
        subs = _subparsers(p)
        if subs:
            for n2, p2 in subs[0].choices.items():
                out["pitboss %s %s" % (name, n2)] = opts(p2)
        else:
            out["pitboss " + name] = opts(p)
    return out


def from_readme():
    text = open(README).read()
    block = text[text.index("<!-- commands"):text.index("<!-- /commands -->")]
    rows = {}
    for line in block.splitlines():
        m = re.match(r"\| `(pitboss [^`]+)` \| (.*?) \|", line)
        if m:
            rows[m.group(1)] = re.findall(r"`([^`]+)`", m.group(2))
    return rows


def test_the_readme_command_table_matches_help():
    helped, documented = from_help(), from_readme()
    assert sorted(documented) == sorted(helped), (
        "in --help only: %s; in the README only: %s"
        % (sorted(set(helped) - set(documented)), sorted(set(documented) - set(helped))))
    for cmd, opts in helped.items():
        assert documented[cmd] == opts, (cmd, documented[cmd], opts)


def test_the_help_of_every_command_renders():
    p = build_parser()
    for name, sp in _subparsers(p)[0].choices.items():
        assert sp.format_help().startswith("usage: pitboss " + name)

"""`python -m host_tools`: the `pitboss` command. The entry point, not a module anything
imports: from a checkout that was never installed it puts firmware/ and the repository
on sys.path first (host_tools.checkout_paths()), as `pip install -e .` would have."""
import sys

import host_tools

sys.path[:0] = [p for p in host_tools.checkout_paths() if p not in sys.path]

from host_tools.cli import main  # noqa: E402

sys.exit(main())

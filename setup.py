"""What pyproject.toml cannot say: the wheel carries the tree the host tools work from.

`pitboss flash`, `vectors` and the virtual board need the firmware, the board
definitions, the rule vectors and the VM's pinned npm manifest as files, not only as
importable modules. build_py copies them into the wheel as host_tools/_tree, laid out as
in the repository, and host_tools.REPO points there once installed (host_tools/__init__.py).
An editable install needs none of it: host_tools finds the checkout beside itself.
"""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = ("firmware", "boards", "tests/vectors", "package.json", "package-lock.json")


class BuildPyWithTree(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        dest = os.path.join(self.build_lib, "host_tools", "_tree")
        shutil.rmtree(dest, ignore_errors=True)  # no file deleted since the last build
        for item in TREE:
            src, dst = os.path.join(HERE, item), os.path.join(dest, item)
            if os.path.isdir(src):
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(src, dst)


setup(cmdclass={"build_py": BuildPyWithTree})

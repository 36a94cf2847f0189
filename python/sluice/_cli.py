"""The `sluice` console script of a pip-installed sluice: runs the command the wheel carries
(sluice/bin/sluice, next to its sluice/lib/libsluice.so.0) with the same arguments.

In a build tree (PYTHONPATH=build/python) there is no such command: use build/sluice.
"""
import os
import sys


def command_path():
    """The `sluice` executable inside the installed package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "sluice")


def main():
    path = command_path()
    if not os.access(path, os.X_OK):
        sys.exit(f"sluice: {path} is missing; this package was not installed with pip "
                 f"(in a build tree, run build/sluice)")
    os.execv(path, [path] + sys.argv[1:])

#!/usr/bin/python3
"""Run PyTorch's own test/test_dataloader.py against torch's DataLoader (copy A) and
against sluice's (copy B: only `from sluice.plugin.pytorch import DataLoader` added after the
file's imports), and print, per test, the two outcomes.

    /usr/bin/python3 scripts/torch_dataloader_suite.py PATH/test_dataloader.py \
        [--build build] [--work /tmp/torchsuite] [--timeout 120] [--slow] [-k EXPR]

PATH is a copy of the file you downloaded yourself (this repository holds none of its text).
The file targets the newest torch; on Debian's torch 1.13 a few names it imports are missing,
so the run directory gets small stand-ins, applied in every process (spawned workers too)
through a sitecustomize module:
  - `expecttest` (a test-only package Debian does not ship): its TestCase base and ACCEPT flag;
  - torch.testing._internal.common_utils: IS_JETSON (False), skipIfNoDill;
  - torch.utils.data.StackDataset: a placeholder class (its own tests fail in A and B alike).
Each test gets a wall-clock limit (--timeout, SIGALRM in the test process), so a hang is a
failure, not a stuck run. --slow also runs the tests PyTorch marks slow (test_proper_exit).
Outcomes come from pytest's JUnit XML; the table lists every test whose outcome differs and
the pass counts of both copies.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

SITECUSTOMIZE = r'''
import importlib.abc
import sys
import unittest


def _common_utils(module):
    if not hasattr(module, "IS_JETSON"):
        module.IS_JETSON = False
    if not hasattr(module, "skipIfNoDill"):
        try:
            import dill  # noqa: F401
            have_dill = True
        except ImportError:
            have_dill = False
        module.skipIfNoDill = unittest.skipIf(not have_dill, "no dill")


def _data(module):
    if not hasattr(module, "StackDataset"):
        class StackDataset(module.Dataset):
            def __init__(self, *args, **kwargs):
                raise NotImplementedError("StackDataset: not in this torch")
        module.StackDataset = StackDataset


_PATCHES = {"torch.testing._internal.common_utils": _common_utils, "torch.utils.data": _data}


class _Patcher(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        exec_module = spec.loader.exec_module

        def patched(module, _exec=exec_module, _fix=_PATCHES[name]):
            _exec(module)
            _fix(module)

        spec.loader.exec_module = patched
        return spec


sys.meta_path.insert(0, _Patcher())
'''

EXPECTTEST = '''
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    pass
'''

CONFTEST = r'''
import os
import signal

import pytest

_LIMIT = int(os.environ.get("TORCHSUITE_TEST_TIMEOUT", "120"))


class TestTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise TestTimeout(f"test ran past {_LIMIT} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(_LIMIT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
'''

SLUICE_IMPORT = "from sluice.plugin.pytorch import DataLoader  # copy B: the one changed line\n"


def make_b(text):
    """Insert the sluice import right after the file's `from torch.utils.data import (...)`."""
    m = re.search(r"^from torch\.utils\.data import \((?:.|\n)*?\)\n", text, re.M)
    if m is None:
        m = re.search(r"^from torch\.utils\.data import .*\n", text, re.M)
    if m is None:
        sys.exit("no `from torch.utils.data import ...` line found")
    return text[:m.end()] + SLUICE_IMPORT + text[m.end():]


def outcomes(xml_path):
    result = {}
    if not os.path.exists(xml_path):
        return result
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        name = f"{case.get('classname', '').split('.')[-1]}.{case.get('name')}"
        kinds = {child.tag for child in case}
        if "failure" in kinds:
            result[name] = "fail"
        elif "error" in kinds:
            result[name] = "error"
        elif "skipped" in kinds:
            result[name] = "skip"
        else:
            result[name] = "pass"
    return result


def run_copy(label, text, args, env):
    d = os.path.join(args.work, label)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "shim"))
    with open(os.path.join(d, "test_dataloader.py"), "w") as f:
        f.write(text)
    with open(os.path.join(d, "conftest.py"), "w") as f:
        f.write(CONFTEST)
    with open(os.path.join(d, "shim", "sitecustomize.py"), "w") as f:
        f.write(SITECUSTOMIZE)
    with open(os.path.join(d, "shim", "expecttest.py"), "w") as f:
        f.write(EXPECTTEST)
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(d, "shim"), d] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    cmd = ["timeout", str(args.total_timeout), sys.executable, "-m", "pytest",
           "-p", "no:cacheprovider", "-q", "-rfE", "--junitxml", os.path.join(d, "report.xml"),
           "test_dataloader.py"]
    if args.k:
        cmd += ["-k", args.k]
    with open(os.path.join(d, "log.txt"), "w") as log:
        rc = subprocess.call(cmd, cwd=d, env=env, stdout=log, stderr=subprocess.STDOUT)
    print(f"copy {label}: pytest exit {rc}, log {d}/log.txt", flush=True)
    return outcomes(os.path.join(d, "report.xml"))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("test_file")
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--build", default=os.path.join(here, "..", "build"))
    p.add_argument("--work", default="/tmp/torchsuite")
    p.add_argument("--timeout", type=int, default=120, help="seconds per test")
    p.add_argument("--total-timeout", type=int, default=1500, help="seconds per copy")
    p.add_argument("--slow", action="store_true", help="also run tests marked slow")
    p.add_argument("--only", choices=["A", "B"], help="run one copy")
    p.add_argument("-k", help="pytest -k expression")
    args = p.parse_args()
    args.work = os.path.abspath(args.work)
    build = os.path.abspath(args.build)

    with open(args.test_file) as f:
        text = f.read()
    env = dict(os.environ)
    env["TORCHSUITE_TEST_TIMEOUT"] = str(args.timeout)
    env["PYTHONPATH"] = os.path.join(build, "python")
    env.setdefault("SLUICE_LIBRARY", os.path.join(build, "lib", "libsluice.so.0.1.0"))
    if args.slow:
        env["PYTORCH_TEST_WITH_SLOW"] = "1"

    a = run_copy("A", text, args, env) if args.only in (None, "A") else {}
    b = run_copy("B", make_b(text), args, env) if args.only in (None, "B") else {}
    names = sorted(set(a) | set(b))
    print(f"\n{'test':70s} {'A':6s} {'B':6s}")
    for n in names:
        if a.get(n) != b.get(n):
            print(f"{n:70s} {a.get(n, '-'):6s} {b.get(n, '-'):6s}")
    for label, res in (("A", a), ("B", b)):
        if res:
            counts = {k: sum(1 for v in res.values() if v == k)
                      for k in ("pass", "fail", "error", "skip")}
            print(f"copy {label}: {len(res)} tests: "
                  + ", ".join(f"{v} {k}" for k, v in counts.items()))
    both = [n for n in names if a.get(n) == "pass"]
    if a and b:
        kept = sum(1 for n in both if b.get(n) == "pass")
        print(f"pass in A and in B: {kept} of {len(both)} that pass in A")


if __name__ == "__main__":
    main()

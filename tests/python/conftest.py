"""tests/python/conftest.py: shared fixtures of the Python tests (pytest).

The package under test is the one the build assembles (PYTHONPATH=${build}/python, set by the
ctest entry `python`). Test data comes from the build's fixtures: SLUICE_TEST_TREE (JPEG class
folders, tests/data/make_tree.py) and SLUICE_TEST_DATA (decoder test images with PIL reference
decodes <file>.rgb.ppm, tests/data/make_images.py); run alone, the tests fall back to
build/testtree and build/testdata of the source tree.
"""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _data_dir(env, default):
    path = pathlib.Path(os.environ.get(env, ROOT / "build" / default))
    if not path.is_dir():
        pytest.skip(f"{env}: {path} does not exist (run ctest, which generates the test data)")
    return path


@pytest.fixture(scope="session")
def tree():
    """A class-per-folder JPEG tree: class_00..class_03, 25 images each."""
    return _data_dir("SLUICE_TEST_TREE", "testtree")


@pytest.fixture(scope="session")
def testdata():
    """Decoder test images and their PIL reference decodes."""
    return _data_dir("SLUICE_TEST_DATA", "testdata")


@pytest.fixture(scope="session")
def tree_files(tree):
    """[(path, label)] of the tree in readers.file's order (class folders, then files, sorted)."""
    classes = sorted(p.name for p in tree.iterdir() if p.is_dir())
    return [(str(f), label) for label, c in enumerate(classes)
            for f in sorted((tree / c).rglob("*.jpg"))]


def pytest_configure(config):
    config.addinivalue_line("markers", "examples: runs a script of examples/ as a subprocess "
                                       "(deselect with -m \"not examples\")")

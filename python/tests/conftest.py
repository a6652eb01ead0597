"""pytest setup for the gpuc package's tests: a fresh compiled-program cache
per session (GPUC_CACHE_DIR, inherited by the subprocesses the tests start),
and paths into the repository (examples/)."""

import os
import pathlib
import tempfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

_cache = tempfile.mkdtemp(prefix="gpuc-pytest-cache-")
os.environ["GPUC_CACHE_DIR"] = _cache


@pytest.fixture
def cache_dir():
    return _cache

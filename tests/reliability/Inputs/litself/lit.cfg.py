# A small lit suite for tests/reliability/run_lit.test: one test that passes,
# one that fails, one that fails once and then passes (its marker file is
# $FLAKY_MARKER), run through scripts/run_lit.py.
import os
import lit.formats

config.name = "self"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".t"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.environ["FLAKY_MARKER"] + ".out"
config.environment["FLAKY_MARKER"] = os.environ["FLAKY_MARKER"]
config.test_retry_attempts = int(lit_config.params.get("retries", "0"))

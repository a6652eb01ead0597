"""The extension module exports PyInit__gpuc and nothing else: the compiler's
internal names (acc_free, ...) must not bind to same-named symbols of other
libraries in the process (libgomp's OpenACC acc_free, loaded by torch, once
took gpuc's calls and aborted in an assertion)."""
import os
import shutil
import subprocess

import pytest

from gpuc import _gpuc


def test_extension_exports_only_its_init():
    nm = shutil.which("nm")
    if nm is None:
        pytest.fail("nm (binutils) is needed for this test")
    so = _gpuc.__file__
    out = subprocess.run([nm, "-D", "--defined-only", so], check=True,
                         capture_output=True, text=True).stdout
    names = sorted(line.split()[-1] for line in out.splitlines()
                   if line.strip() and line.split()[-2] in ("T", "D", "B", "R", "W", "V"))
    assert names == ["PyInit__gpuc"], "%s exports %d names, e.g. %s" % (os.path.basename(so), len(names), names[:10])

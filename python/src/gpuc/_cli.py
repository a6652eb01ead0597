"""The `gpuc` console script: runs the gpuc command shipped inside the package
(gpuc/bin/gpuc), which finds the standard library, headers and runtime
libraries next to it (gpuc/_paths.py)."""

import os
import sys

from . import _paths


def main():
    path = _paths.bin_path()
    try:
        os.execv(path, [path] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("gpuc: error: cannot run %s: %s\n" % (path, e))
        return 127


if __name__ == "__main__":
    sys.exit(main())

"""Where the installed package keeps gpuc's files. The package directory is
laid out as an install prefix (what driver/build_exe.c and the stdlib lookup
of the gpuc command expect from PREFIX/bin/gpuc):

    gpuc/bin/gpuc                 the command (run by the `gpuc` script)
    gpuc/include/                 gpuc.h, gpuc_program.h
    gpuc/lib/                     libgpuc_runtime.{a,so}, libgpuc_runner.a
    gpuc/share/gpuc/stdlib/       the standard library (import "std/...")

GPUC_PYTHON_PREFIX overrides the prefix (a build tree laid out the same way).
"""

import os

_here = os.path.dirname(os.path.abspath(__file__))


def prefix():
    return os.environ.get("GPUC_PYTHON_PREFIX") or _here


def bin_path():
    return os.path.join(prefix(), "bin", "gpuc")


def include_dir():
    return os.path.join(prefix(), "include")


def lib_dir():
    return os.path.join(prefix(), "lib")


def stdlib_dir():
    return os.path.join(prefix(), "share", "gpuc", "stdlib")

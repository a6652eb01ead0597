"""The C backend's build step: the generated C of a program (--emit=program)
compiled once with the system C compiler into a shared object, kept in a
disk cache keyed by the source, the compiler and the flags, and opened with
dlopen (gpuc._gpuc.load_program).

Cache: $GPUC_CACHE_DIR/python, else $XDG_CACHE_HOME/gpuc/python, else
~/.cache/gpuc/python. Each object is written under a temporary name and
renamed into place, so concurrent processes never see half an object.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile

from . import _paths

# What the generated program gets around it: its `main` renamed out of the
# way, and the accessor _gpuc.c looks up.
_TAIL = """
/* added by gpuc/_cbackend.py: the program table for the Python extension */
const GpucProgram *gpuc_python_program(void) { return &gpuc_program; }
"""
_CFLAGS = ["-std=c11", "-O2", "-fPIC", "-shared", "-Dmain=gpuc_python_unused_main"]

builds = 0   # objects built by this process (tests read it; cache hits do not count)


def cache_dir():
    base = os.environ.get("GPUC_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "gpuc")
    return os.path.join(base, "python")


def _compiler():
    """The C compiler command (list) and what identifies it in the cache key."""
    cc = os.environ.get("CC") or "cc"
    argv = cc.split()
    path = shutil.which(argv[0])
    if not path:
        from . import Error
        raise Error("gpuc: the C backend needs a C compiler: '%s' not found (install gcc, or set CC)" % argv[0])
    st = os.stat(path)
    return argv, "%s %s %d %d" % (cc, os.path.realpath(path), st.st_size, int(st.st_mtime))


def build(source):
    """The path of the shared object for program source `source`, built if not cached."""
    global builds
    argv, ident = _compiler()
    libdir = _paths.lib_dir()
    link = ["-L" + libdir, "-Wl,-rpath," + libdir, os.path.join(libdir, "libgpuc_runner.a"),
            "-lgpuc_runtime", "-lm", "-ldl", "-lpthread"]
    flags = _CFLAGS + ["-I" + _paths.include_dir()]
    key = hashlib.sha256("\0".join([source, _TAIL, ident] + flags + link).encode()).hexdigest()[:32]
    directory = cache_dir()
    target = os.path.join(directory, key + ".so")
    if os.path.exists(target):
        return target
    os.makedirs(directory, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpuc-build-", dir=directory) as tmp:
        src = os.path.join(tmp, "program.c")
        with open(src, "w") as f:
            f.write(source)
            f.write(_TAIL)
        out = os.path.join(tmp, "program.so")
        cmd = argv + flags + [src, "-o", out] + link
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            from . import Error
            raise Error("gpuc: the C compiler failed on the generated program (a gpuc bug):\n%s\n%s"
                        % (" ".join(cmd), proc.stdout))
        os.replace(out, target)
    builds += 1
    return target

"""The warm-compile cache: what one gpuc.compile produced (the path of the
built shared object, the module's entries, the files the compiler read),
recorded under a hash of everything the compile depends on, so that a later
gpuc.compile of the same program, in any process, opens the object without
running the gdsl compiler (docs/python.md, "Compile cache").

Key: the backend, the gpuc version, the package prefix, $CC, the source
(text, or a path and the current directory), the defines and the arch.
Imported files are not in the key (their names are known only after a
compile): the record lists every file the compiler read with its size and
modification time, and a record whose files changed is not used (the
program is compiled again and the record replaced).

Records are JSON files `compile-KEY.json` in the object cache directory
(gpuc/_cbackend.py), written under a temporary name and renamed.
"""

import hashlib
import json
import os
import tempfile

from . import _cbackend, _paths


def key(backend, source_path, source_text, defines, arch, version):
    parts = [backend, version, _paths.prefix(), os.environ.get("CC") or "cc", arch or "",
             os.path.abspath(source_path) if source_path else "", source_text if source_text is not None else "",
             os.getcwd()] + list(defines)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _record_path(k):
    return os.path.join(_cbackend.cache_dir(), "compile-" + k + ".json")


def _stamp(path):
    st = os.stat(path)
    return [path, st.st_size, st.st_mtime_ns]


def lookup(k):
    """The record stored under k, or None when there is none, it cannot be
    read, its object is gone or a file it was compiled from changed."""
    try:
        with open(_record_path(k)) as f:
            record = json.load(f)
        for path, size, mtime in record["files"]:
            if _stamp(path) != [path, size, mtime]:
                return None
        if not os.path.exists(record["object"]):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record


def store(k, record, files):
    """Record what a compile produced; files: the paths the compiler read
    (names that are not files, like <string>, are left out)."""
    stamps = []
    for path in files:
        try:
            stamps.append(_stamp(os.path.abspath(path)))
        except OSError:
            continue
    record = dict(record, files=stamps)
    directory = _cbackend.cache_dir()
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="compile-", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        os.replace(tmp, _record_path(k))
    except OSError:
        pass    # a cache that cannot be written only makes the next compile cold

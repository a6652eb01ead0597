#!/usr/bin/env python3
"""Compile a CUDA C file with NVRTC (through ctypes) for the given
architectures, as the runtime does; fail on any error or warning.
usage: nvrtc_check.py CUDA_HOME FILE.cu sm_80 sm_90 ..."""
import ctypes
import glob
import os
import sys


def load(cuda_home):
    cands = [os.path.join(cuda_home, "lib64", "libnvrtc.so")]
    cands += sorted(glob.glob(os.path.join(cuda_home, "lib64", "libnvrtc.so.*")))
    cands += sorted(glob.glob(os.path.join(cuda_home, "targets", "x86_64-linux", "lib", "libnvrtc.so*")))
    for c in cands:
        if os.path.exists(c):
            return ctypes.CDLL(c)
    sys.exit("nvrtc_check: libnvrtc not found under " + cuda_home)


def main():
    cuda_home, path, archs = sys.argv[1], sys.argv[2], sys.argv[3:]
    nv = load(cuda_home)
    src = open(path, "rb").read()
    status = 0
    for arch in archs:
        prog = ctypes.c_void_p()
        r = nv.nvrtcCreateProgram(ctypes.byref(prog), src, path.encode(), 0, None, None)
        if r != 0:
            sys.exit("nvrtcCreateProgram failed: %d" % r)
        opts = [b"--gpu-architecture=" + arch.encode(), b"--std=c++17", b"-default-device"]
        arr = (ctypes.c_char_p * len(opts))(*opts)
        r = nv.nvrtcCompileProgram(prog, len(opts), arr)
        size = ctypes.c_size_t()
        nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetProgramLog(prog, log)
        text = log.value.decode(errors="replace").strip()
        if r != 0 or "warning" in text:
            print("%s: %s: NVRTC %s\n%s" % (path, arch, "error" if r else "warning", text))
            status = 1
        else:
            print("%s: ok" % arch)
        nv.nvrtcDestroyProgram(ctypes.byref(prog))
    sys.exit(status)


main()

#!/usr/bin/env python3
"""Fail if the kernels of a generated CUDA file use double precision where
the program has none: a bare floating literal (no f suffix), the double
type, or a double math function.  Only the device part is checked (up to
the host launchers)."""
import re
import sys

text = open(sys.argv[1]).read()
start = text.index("/* ---- end of prelude ---- */")
end = text.index("#if (defined(GPUC_CUDA_HOST)")
kernels = text[start:end]
kernels = re.sub(r"/\*.*?\*/", "", kernels, flags=re.S)
kernels = re.sub(r"struct __align__\(16\) gpuc_v16_f64 \{ double v\[2\]; \};", "", kernels)
kernels = re.sub(r"GPUC_SHFL\(double\)", "", kernels)
kernels = re.sub(r"GPUC_SHARED_LS\(f64, double, \"f64\", \"d\", double\)", "", kernels)
bad = []
for m in re.finditer(r"(?<![\w.])(\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)(?![\w.])", kernels):
    bad.append("double literal " + m.group(1))
for m in re.finditer(r"\bdouble\b", kernels):
    bad.append("the type double")
for fn in ["exp", "log", "sin", "cos", "sqrt", "pow", "fabs", "fmin", "fmax", "tanh", "erf", "floor"]:
    for m in re.finditer(r"\b%s\(" % fn, kernels):
        bad.append("double function " + fn)
if bad:
    print("\n".join(sorted(set(bad))))
    sys.exit(1)
print("no double precision in the kernels")

#!/bin/bash
# gpu_check.sh: the Python package on a GPU machine (docs/python.md). Installs
# the wheel built beside the repository (.whl/, made on the build machine with
# `build/python-venv/bin/python -m pip wheel -q --no-deps ./python -w .whl`)
# into a temporary folder (no network: --no-index), then runs
# python/tests/test_cuda.py (every entry of examples/ on CuPy arrays and torch
# tensors against the C backend, streams, out=, errors, threads, the C path),
# python/tests/test_fastpath.py (needs pytest) and every examples/python/*.py,
# which must say it ran on the cuda backend. One line PASS/FAIL each, a
# summary, exit 1 on any failure. Run from the repository root.
set -u
ROOT=$PWD
PY=${PYTHON:-python3}
case $PY in */*) PY=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY") ;; esac   # the tests run from python/tests
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export GPUC_CACHE_DIR=$W/cache
fails=0
passes=0
report() { # name, status, log
    if [ "$2" = 0 ]; then echo "$1: PASS"; passes=$((passes + 1)); else echo "$1: FAIL (exit $2)"; fails=$((fails + 1)); fi
    sed 's/^/    /' "$3" | tail -n 12
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1
wheel=$(ls "$ROOT"/.whl/gpuc-*.whl 2>/dev/null | head -1)
if [ -z "$wheel" ]; then
    echo "gpu_check: no wheel in .whl/ (build it first: build/python-venv/bin/python -m pip wheel -q --no-deps ./python -w .whl)"
    exit 1
fi
if ! "$PY" -m pip install -q --no-index --no-deps --target "$W/site" "$wheel" > "$W/pip.log" 2>&1; then
    report "install $(basename "$wheel")" 1 "$W/pip.log"
    exit 1
fi
export PYTHONPATH=$W/site${PYTHONPATH:+:$PYTHONPATH}
"$PY" -c "import gpuc, gpuc._cuda as c; print('gpuc', gpuc.version(), 'from', gpuc.__file__, '| GPU usable:', c.usable())"
"$PY" -c "import cupy, torch; print('cupy', cupy.__version__, '| torch', torch.__version__)" 2>&1 | tail -1

cd "$ROOT/python/tests"
have_pytest=0
"$PY" -c "import pytest" 2>/dev/null && have_pytest=1
if [ $have_pytest = 1 ]; then
    "$PY" -m pytest -q -p no:cacheprovider -rs test_cuda.py > "$W/cuda.log" 2>&1
else
    "$PY" test_cuda.py > "$W/cuda.log" 2>&1    # its plain-script mode
fi
st=$?
if [ $st = 0 ] && grep -q "^SKIPPED\|^SKIP" "$W/cuda.log"; then   # on the GPU machine a skipped test is a failure
    st=2
    echo "gpu_check: a test was skipped (see above)" >> "$W/cuda.log"
fi
report "test_cuda.py" $st "$W/cuda.log"
if [ $have_pytest = 1 ]; then
    "$PY" -m pytest -q -p no:cacheprovider -s test_fastpath.py > "$W/fast.log" 2>&1
    report "test_fastpath.py" $? "$W/fast.log"
else
    echo "test_fastpath.py: FAIL (pytest is not installed; pip install pytest)"
    fails=$((fails + 1))
fi
cd "$ROOT"
for script in examples/python/*.py; do
    "$PY" "$script" > "$W/ex.log" 2>&1
    st=$?
    if [ $st = 0 ] && ! grep -q ": ok on the cuda backend" "$W/ex.log"; then   # ran, but not on the GPU
        st=3
        echo "gpu_check: it did not run on the cuda backend" >> "$W/ex.log"
    fi
    report "$script" $st "$W/ex.log"
done
echo "python gpu_check: $passes passed, $fails failed"
[ $fails = 0 ]

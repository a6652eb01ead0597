#!/bin/bash
# comm_gpu.sh: gpuc.Comm and sharded entries from Python on one GPU
# (docs/python.md "Sharded entries"). Run from the repository root on the GPU
# machine, after building the wheel here (`build/python-venv/bin/python -m
# pip wheel -q --no-deps ./python -w .whl`, carried as .whl/): installs it
# into a temporary folder (no network) as gpu_check.sh does, then runs
# comm_gpu_check.py twice, in two processes: `torch` (a one-rank
# torch.distributed group, backend nccl, init_method file://,
# gpuc.Comm.from_torch; CuPy, torch and NumPy arrays) and `cupy`
# (cupy.cuda.nccl's communicator through Comm.from_nccl, gpuc's own
# bootstrap, from_mpi4py's path). Every entry of a sharded program against
# the plain module. libnccl: $GPUC_NCCL_LIBRARY, else the nvidia-nccl wheel
# PyTorch brings, else libnccl.so.2. Prints one table and
# `comm_gpu: PASS` or `FAIL`; exit 1 on failure. Under 90 s on an H100.
# `comm_gpu.sh repeat` runs the `repeat` mode alone (the float scan many
# times: is it repeatable bitwise, is it right; comm_gpu_check.py's top).
set -u
ROOT=$PWD
PY=${PYTHON:-python3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export GPUC_CACHE_DIR=$W/cache      # both processes share the compiled libraries
wheel=$(ls "$ROOT"/.whl/gpuc-*.whl 2>/dev/null | head -1)
if [ -z "$wheel" ]; then
    echo "comm_gpu: FAIL (no wheel in .whl/: build/python-venv/bin/python -m pip wheel -q --no-deps ./python -w .whl)"
    exit 1
fi
if ! "$PY" -m pip install -q --no-index --no-deps --target "$W/site" "$wheel" > "$W/pip.log" 2>&1; then
    tail -n 12 "$W/pip.log"
    echo "comm_gpu: FAIL (the wheel did not install)"
    exit 1
fi
export PYTHONPATH=$W/site${PYTHONPATH:+:$PYTHONPATH}
if [ -z "${GPUC_NCCL_LIBRARY:-}" ]; then
    w=$("$PY" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
    [ -n "$w" ] && [ -f "$w" ] && export GPUC_NCCL_LIBRARY=$w
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1
echo "libnccl: ${GPUC_NCCL_LIBRARY:-libnccl.so.2 from the loader path}"
"$PY" -c "import gpuc, cupy, torch; print('gpuc', gpuc.version(), '| cupy', cupy.__version__, '| torch', torch.__version__)" 2>&1 | tail -1
fails=0
for mode in ${*:-torch cupy}; do
    timeout 120 "$PY" "$ROOT/python/tests/comm_gpu_check.py" $mode > "$W/$mode.log" 2>&1
    st=$?
    cat "$W/$mode.log"
    if [ $st != 0 ]; then
        grep -q "^comm_gpu $mode:" "$W/$mode.log" || echo "comm_gpu $mode: FAIL (exit $st)"
        fails=$((fails + 1))
    fi
done
if [ $fails = 0 ]; then echo "comm_gpu: PASS"; else echo "comm_gpu: FAIL"; exit 1; fi

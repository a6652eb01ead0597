#!/usr/bin/env bash
# Session 14, device call G (H200): bench/try_footprint.cu again, now with
# a grid-stride copy (the order gpuc's kernels keep) at 256 MiB to 3 GiB
# each way and x = a + b both ways: whether a kernel's copy rate, unlike
# cudaMemcpy's, falls with the bytes the i64 scans (2 GiB each way) and the
# recurrence (three arrays of 1 GiB) touch.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
timeout 150 bench/bin/try_footprint; echo "footprint rc=$?"

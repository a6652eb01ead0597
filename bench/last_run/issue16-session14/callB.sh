#!/usr/bin/env bash
# Session 14, device call B (H200): the copy rate against the bytes a case
# touches (bench/try_footprint.cu: cudaMemcpy and a copy kernel of 256 MiB
# to 3 GiB each way, x = a + b over 1 GiB arrays), for why the i64 scans
# and the recurrence stay short of their targets on the H200 only; and the
# wide scan with tiles of 2048 items, 12 slots (bench/try_variants.sh wide
# w2k).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; rm -rf $R; mkdir -p $R
echo "== footprint $(date -u +%T)"
timeout 120 bench/bin/try_footprint > $R/footprint.txt 2>&1; echo "footprint rc=$?"
cat $R/footprint.txt
echo "== variants $(date -u +%T)"
OUT=$R/var timeout 200 bash bench/try_variants.sh wide w2k > $R/variants.txt 2>&1; echo "variants rc=$?"
cat $R/variants.txt
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.txt var) 2>/dev/null

#!/usr/bin/env bash
# Session 14, device call E (H200): bench/recheck.sh (bench/run.sh's new
# recheck part) on the GPU, on the records of this session's whole run
# (run_h200/, 18:35 UTC): its plan (the ten reductions within 2% of CUB's
# time, LayerNorm's paths at rows of 1024), two more rounds of each in turn,
# and bench/report.py's table with the rechecked medians. The rounds run
# about ten minutes after the whole run ended: a check of the part, not a new run.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/res; rm -rf $R; mkdir -p $R
cp bench/last_run/issue16-session14/run_h200/{records.jsonl,machine.txt,parts.txt} $R/
hd=()
for p in elementwise reduce scan filter stats rows rows_nn matmul; do hd+=("$p=bench/gen/bin/bench_$p"); done
echo "== recheck $(date -u +%T)"
timeout 300 bash bench/recheck.sh --res $R --cub bench/gen/bin/peers_cub --paths bench/gen/bin/paths --top 28 --rounds 2 "${hd[@]}"
echo "recheck rc=$? $(date -u +%T)"
python3 bench/report.py $R --json $R/results.json > $R/table.md; echo "report rc=$?"
grep -E "^\| (sum|max|dot|sumsq) \| .* \| 2\^28 \|" $R/table.md | head -10
grep -E "^\| layer_norm \| f32 \| 262144x1024 " $R/table.md
sed -n '/^Rechecked/,/^$/p' $R/table.md
tail -n 12 $R/table.md
cp $R/table.md $R/records.jsonl $R/results.json $OUT/

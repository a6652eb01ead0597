#!/usr/bin/env bash
# sanitize.sh: compute-sanitizer over every kernel kind of gpuc and every
# variant its launchers pick, on the device machine, from the repository root
# after tests/gpu/prepare.sh filled .device/ on the build machine.
#
#   bash tests/gpu/sanitize.sh              build, then run every case
#   SANITIZE_DRY=1 bash tests/gpu/sanitize.sh   build everything, list the runs
#
# The programs are the entries of tests/gpu/sanitize.gdsl; the CASES table
# below gives each the input shapes that reach its variants (tile edges,
# several blocks, each row kernel). Two paths:
#   exe  the executable `gpuc -o` builds (the runtime, kernels compiled by
#        NVRTC): all shapes of an entry in one process (`--batch`);
#   cuh  the --emit=cuda file compiled by nvcc with -DGPUC_MAIN (the CUDA
#        runtime API launchers): one process per shape, for the scan,
#        filter and row cases.
# Each (case, path, tool) is one run: `compute-sanitizer --tool memcheck`,
# `racecheck`, `synccheck`, and `initcheck` for the cases marked so; one
# memcheck run with `--leak-check full`. Sharded entries run with
# `--ranks 1` (NCCL: $GPUC_NCCL_LIBRARY, libnccl.so.2 or PyTorch's wheel).
# A run passes when the sanitizer reports no error (exit status 97 is an
# error: --error-exitcode) and every input gives the exit status expected
# (0; 1 for the out-of-bounds gather case, whose bounds check must report
# the index, not fault). One line per run, then "N passed, N failed"; exit
# status 1 when any failed. Logs in $OUT (default /tmp/gpuc-sanitize).
#
# Variables: GPUC (default .device/prefix/bin/gpuc), GPUC_DEVICE_ARCH
# (sm_90), COMPUTE_SANITIZER (the command; default compute-sanitizer),
# SANITIZE_ONLY (a grep -E pattern over "case path tool": run those only),
# SANITIZE_REUSE=1 (keep $OUT/prog and $OUT/cuh from an earlier call).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/gpuc-sanitize}
mkdir -p "$out/in"
dev=$root/.device
gpuc=${GPUC:-$dev/prefix/bin/gpuc}
[ -d "$dev/prefix" ] && export GPUC_HOME=${GPUC_HOME:-$dev/prefix} GPUC_CACHE_DIR=${GPUC_CACHE_DIR:-$dev/cache}
arch=${GPUC_DEVICE_ARCH:-sm_90}
cs=${COMPUTE_SANITIZER:-compute-sanitizer}
dry=${SANITIZE_DRY:-0}
src=$root/tests/gpu/sanitize.gdsl
export PATH=$PATH:${GPUC_CUDA_HOME:-/usr/local/cuda}/bin

# CASES: NAME ENTRY FLAGS SHAPES...
#   FLAGS: letters; i: also initcheck, l: the memcheck
#          run with --leak-check full, s: --ranks 1 (sharded), e1: every
#          input must fail with exit status 1 (an index error), - none
#   SHAPES: one per input, `;` between the arguments of one input:
#     TYPE:DIMS[:LO:HI]  an array of random values (DIMS `70001` or `3x4097`;
#                        floats in [LO, HI], default [-1, 1]; integers in
#                        [LO, HI), default [-1000, 1000), unsigned [0, 1000))
#     =VALUE             a scalar as written
# Sizes: a scan of a 4-byte array as it is read holds 14080 items a tile
# (256 x 55, the bulk-copy kernel: its tile is stored with cp.async.bulk,
# which initcheck does not count as writing, so its initcheck runs on
# scan_threads instead: 256 x 43, built by nvcc with the register kernel);
# other scans 4992 (128 x 39) 4-byte items, 2944 wider; filter 8192 (256 x
# 32) 4-byte values, 4096 wider; row kernels (f32): a part of a warp per row
# up to 512, a warp to
# 1024, the register-only block (NAME_regs) to 8192, the 1024-thread big
# block for 8193..32768 when m % 4 == 0, else the stash kernel; clusters of 8
# blocks past 32768 (LayerNorm: past 8192 when not big), each part in
# registers (NAME_clregs) up to 8 x 8192, else with the stash (NAME_cl); f64
# halves those. Matrix products: 128 x 64 tiles (fast), split k when there
# are few tiles and k >= 256. The streaming kernels (sm_90): 4-byte scans
# (SCAN BULK 3, tiles of 8192 items, one block an SM) past one tile; scans
# with 16-byte look-back words (SCAN BULK 3 WIDE: i64/u64 scans, tuple scans
# of two f32 arrays; tiles of 4096 items) from 2^26 items by default, far above these shapes: past one
# tile with GPUC_SCAN_WIDE=1 in the environment (the scan_wide_* cases then
# run it, as on 2026-11-28 and 2026-11-29); rows of at least
# 65536 4-byte elements in whole chunks of 8192 (NAME_st); rows of whole
# 16-byte vectors up to 256 f32 (128 f64) with a warp a row (NAME_warp; the
# row_warp* cases) unless GPUC_ROW_WARP=0 (then a part of a warp a row).
CASES=$(cat <<'EOF'
map_saxpy      map_saxpy      il  =2.5;f32:1;f32:1  =2.5;f32:4099;f32:4099  =-1.0;f32:70001;f32:70001
map_bcast      map_bcast      -   f32:3x33;f32:33;f32:3  f32:130x1027;f32:1027;f32:130
map_tuple      map_tuple      -   f64:33;i32:33  f64:70001;i32:70001
red_sum        red_sum        i   f32:1  f32:33  f32:4099  f32:70001
red_fused      red_fused      -   i32:1  i32:4097  i32:70001
red_welford    red_welford    -   f64:2  f64:4097  f64:70001
red_softmax    red_softmax    -   f32:33  f32:70001
red_logsumexp  red_logsumexp  -   f32:1  f32:70001
red_ordered    red_ordered    -   i32:7  i32:4097  i32:70001
scan_incl_f32  scan_incl_f32  -   f32:1  f32:14080  f32:14081  f32:28161  f32:70001
scan_excl_i32  scan_excl_i32  -   i32:1  i32:14081  i32:70001
scan_threads   scan_threads   -   f32:11008  f32:11009  f32:70001
scan_first     scan_first     -   i32:33  i32:4993  i32:70001
scan_incl_i64  scan_incl_i64  -   i64:1  i64:2945  i64:70001
scan_excl_u64  scan_excl_u64  -   u64:2945  u64:70001
scan_tuple     scan_tuple     -   f32:33;f32:33  f32:2945;f32:2945  f32:70001;f32:70001
scan_tuple_ex  scan_tuple_ex  -   f32:2945;f32:2945  f32:70001;f32:70001
red_sharded    red_sum        s   f32:33  f32:70001
scan_sharded   scan_incl_f32  s   f32:14081  f32:70001
filter_pos     filter_pos     i  f32:1  f32:4993  f32:8193  f32:70001
filter_zip     filter_zip     -   i32:33  i32:70001
filter_sum     filter_sum     -   f64:4993:0:1  f64:70001:0:1
row_sum        row_sum        -   f32:9x7  f32:5x33  f32:3x1025  f32:2x40001
row_argmax     row_argmax     -   f64:9x7  f64:3x257  f64:3x4097
row_softmax    row_softmax    i  f32:9x7  f32:5x33  f32:3x1000  f32:3x4097  f32:2x16384  f32:2x16383  f32:2x40000  f32:2x70001
row_softmax_f64 row_softmax_f64 - f64:5x33  f64:3x4095  f64:2x8192  f64:2x8191  f64:2x20000  f64:2x40001
row_layernorm  row_layernorm  -   f32:5x33;f32:33;f32:33  f32:3x4097;f32:4097;f32:4097  f32:2x16384;f32:16384;f32:16384  f32:2x16385;f32:16385;f32:16385  f32:2x70001;f32:70001;f32:70001
row_xent       row_xent       -   f32:9x33;i64:9:0:33  f32:3x4097;i64:3:0:4097  f32:2x40001;i64:2:0:40001
row_xent_oob   row_xent       e1  f32:3x33;i64:3:33:40  f32:2x40001;i64:2:-9:-1
row_warp       row_softmax    i   f32:9x256  f32:37x128  f32:5x4  f32:3x252
row_warp_f64   row_softmax_f64 -  f64:9x128  f64:5x2
row_warp_ln    row_layernorm  -   f32:9x256;f32:256;f32:256
row_warp_xent  row_xent       -   f32:9x256;i64:9:0:256
col_sum        col_sum        -   f32:1000x33  f32:33x4097
col_argmin     col_argmin     -   f64:7x5  f64:300x257
scatter_perm   scatter_perm   -   f32:33  f32:70001
scatter_idx    scatter_idx    -   f64:1000;i32:4097:0:1000;f64:4097
mm_f32         mm_f32         i   f32:1x1;f32:1x1  f32:65x6;f32:6x129  f32:200x300;f32:300x170  f32:3x1000;f32:1000x5
mm_f64         mm_f64         -   f64:1x1;f64:1x1  f64:65x7;f64:7x129  f64:200x300;f64:300x170  f64:65x777;f64:777x33
mm_f64_t16     mm_f64_t16     -   f64:17x33;f64:33x15  f64:100x40;f64:40x70
mm_i32         mm_i32         -   i32:33x65;i32:65x31  i32:100x40;i32:40x70
row_sharded    row_softmax    s   f32:5x33  f32:3x4097
scan_stream_f32 scan_incl_f32 -   f32:1638400  f32:2000001
scan_stream_i32 scan_excl_i32 -   i32:1638405
row_softmax_st row_softmax    -   f32:3x65536  f32:2x270336
row_layernorm_st row_layernorm -  f32:2x65536;f32:65536;f32:65536
scan_wide_tuple scan_tuple    -   f32:1638405;f32:1638405
scan_wide_tex  scan_tuple_ex  -   f32:1638405;f32:1638405
scan_wide_i64  scan_incl_i64  -   i64:1638405
scan_wide_u64  scan_excl_u64  -   u64:1638400
map_sharded    map_saxpy      s   =2.5;f32:4099;f32:4099
EOF
)

# CUH: cases run again through the nvcc build of the --emit=cuda file, one
# process per shape: the variants of the scan, filter and row kernels.
CUH=$(cat <<'EOF'
scan_incl_f32  scan_incl_f32  -   f32:14081  f32:70001
scan_threads   scan_threads   i   f32:11009  f32:70001
scan_excl_i32  scan_excl_i32  -   i32:70001
scan_incl_i64  scan_incl_i64  -   i64:70001
scan_tuple_ex  scan_tuple_ex  -   f32:70001;f32:70001
filter_pos     filter_pos     i   f32:70001
filter_zip     filter_zip     -   i32:70001
row_sum        row_sum        -   f32:5x33  f32:2x40001
row_softmax    row_softmax    -   f32:3x4097  f32:2x16384  f32:2x16383  f32:2x70001
row_layernorm  row_layernorm  -   f32:2x16385;f32:16385;f32:16385
row_xent       row_xent       -   f32:2x40001;i64:2:0:40001
row_warp       row_softmax    -   f32:37x128  f32:9x256
scan_stream_f32 scan_incl_f32 -   f32:2000001
row_softmax_st row_softmax    -   f32:3x65536
scan_wide_tuple scan_tuple    -   f32:1638405;f32:1638405
scan_wide_i64  scan_incl_i64  -   i64:1638405
EOF
)

# text of one argument: arg TYPE:DIMS[:LO:HI] SEED
arg() {
  local spec=$1 seed=$2
  case $spec in =*) printf '%s\n' "${spec#=}"; return ;; esac
  local IFS=:; set -- $spec; unset IFS
  local ty=$1 dims=$2 lo=${3:-} hi=${4:-}
  local rows=0 cols=${dims#*x}
  [ "$dims" != "$cols" ] && rows=${dims%x*}
  if [ -z "$lo" ]; then
    case $ty in f*) lo=-1 hi=1 ;; u*) lo=0 hi=1000 ;; *) lo=-1000 hi=1000 ;; esac
  fi
  awk -v ty="$ty" -v rows="$rows" -v cols="$cols" -v lo="$lo" -v hi="$hi" -v seed="$seed" 'BEGIN {
    srand(seed); float = substr(ty, 1, 1) == "f"
    nr = rows ? rows : 1
    if (rows) printf "["
    for (r = 0; r < nr; r++) {
      printf "%s[", r ? ", " : ""
      for (i = 0; i < cols; i++) {
        v = float ? sprintf("%.6g", lo + (hi - lo) * rand()) : sprintf("%d", lo + int((hi - lo) * rand()))
        printf "%s%s", i ? ", " : "", v
      }
      printf "]"
    }
    if (rows) printf "]"
    printf "\n"
  }'
}

passed=0 failed=0
report() {   # report OK LINE LOG
  if [ "$1" = 1 ]; then passed=$((passed + 1)); echo "PASS $2"
  else failed=$((failed + 1)); echo "FAIL $2 (log $3)"; tail -n 25 "$3" | sed 's/^/    /'; fi
}

# ---- build: the executable (NVRTC) and the nvcc build of the --emit=cuda file
t0=$SECONDS
echo "sanitize: gpuc $gpuc, arch $arch, logs $out"
build_ok=1
if [ "${SANITIZE_REUSE:-0}" = 1 ] && [ -x "$out/prog" ] && [ -x "$out/cuh" ]; then
  echo "sanitize: reusing $out/prog and $out/cuh (SANITIZE_REUSE=1)"
else
  # the two builds at once: NVRTC for the executable, nvcc for the header
  "$gpuc" --arch="$arch" "$src" -o "$out/prog" > "$out/build_exe.log" 2>&1 &
  exe_pid=$!
  "$gpuc" --emit=cuda "$src" -o "$out/sanitize.cuh" > "$out/build_cuh.log" 2>&1 &&
    nvcc -std=c++17 -arch="$arch" -DGPUC_MAIN -DGPUC_SCAN_BULK_scan_threads_k0_scan=0 -x cu "$out/sanitize.cuh" \
      -o "$out/cuh" >> "$out/build_cuh.log" 2>&1
  cuh_ok=$?
  wait "$exe_pid"
  exe_ok=$?
  [ "$exe_ok" = 0 ] || build_ok=0
  report $((exe_ok == 0)) "build exe with gpuc -o --arch=$arch" "$out/build_exe.log"
  [ "$cuh_ok" = 0 ] || build_ok=0
  report $((cuh_ok == 0)) "build cuh with nvcc -arch=$arch -DGPUC_MAIN ($((SECONDS - t0)) s for both)" "$out/build_cuh.log"
fi
[ "$build_ok" = 1 ] || { echo "$passed passed, $failed failed"; exit 1; }

# NCCL for the --ranks 1 cases
source "$root/tests/gpu/common.sh"
find_nccl

# ---- inputs: one text file per case and shape (cuh cases: names cuh.*)
declare -a names entries flags shapes
nc=0
read_cases() {   # read_cases PREFIX TABLE
  local prefix=$1 name entry flag rest shape si ai p f
  while read -r name entry flag rest; do
    [ -z "$name" ] && continue
    rest=$(echo $rest)
    names[nc]=$prefix$name entries[nc]=$entry flags[nc]=$flag shapes[nc]=$rest
    si=0
    for shape in $rest; do
      f=$out/in/$prefix$name.$si.txt
      : > "$f"
      ai=0
      IFS=';' read -r -a parts <<< "$shape"
      for p in "${parts[@]}"; do arg "$p" $((nc * 1000 + si * 10 + ai + 1)) >> "$f"; ai=$((ai + 1)); done
      si=$((si + 1))
    done
    nc=$((nc + 1))
  done <<< "$2"
}
read_cases "" "$CASES"
nexe=$nc
read_cases cuh. "$CUH"

wanted() { [ -z "${SANITIZE_ONLY:-}" ] || grep -qE "$SANITIZE_ONLY" <<< "$1"; }

# sanitize LOG CMD...: the sanitizer around CMD, its report and CMD's output in LOG
sanitize() {
  local log=$1; shift
  "$cs" --error-exitcode 97 --print-limit 10 "$@" > "$log" 2>&1
}

# Reports per run of a batch log: "ID STATUS REPORTS" for each status line,
# then "- - REPORTS NCCL" (those after the last run; NCCL's own kernel
# probes, left out): tests/gpu/sanitize_attribute.awk, tested on the CPU by
# tests/reliability/sanitize_attribute.test.
attribute() { awk -f "$root/tests/gpu/sanitize_attribute.awk" "$1"; }

# ---- exe path: every case and shape in one --batch process per tool
mkdir -p "$out/err"
for tool in memcheck racecheck synccheck initcheck leak; do
  list=$out/exe.$tool.batch log=$out/exe.$tool.log
  : > "$list"
  sel=()
  for ((c = 0; c < nexe; c++)); do
    case $tool in initcheck) [[ ${flags[c]} == *i* ]] || continue ;; leak) [[ ${flags[c]} == *l* ]] || continue ;; esac
    wanted "${names[c]} exe $tool" || continue
    sel+=("$c")
    opts=$'\t--backend\tcuda'
    [[ ${flags[c]} == *s* ]] && opts+=$'\t--ranks\t1'
    si=0
    for shape in ${shapes[c]}; do
      printf '%s\t%s\t%s\t%s\t-e\t%s%s\n' "${names[c]}.$si" "$out/in/${names[c]}.$si.txt" /dev/null \
        "$out/err/${names[c]}.$tool.$si.txt" "${entries[c]}" "$opts" >> "$list"
      si=$((si + 1))
    done
  done
  [ ${#sel[@]} = 0 ] && continue
  if [ "$dry" = 1 ]; then
    for c in "${sel[@]}"; do echo "RUN  ${names[c]} exe $tool (${shapes[c]// /, })"; done
    continue
  fi
  args=(--tool "$tool")
  [ "$tool" = leak ] && args=(--tool memcheck --leak-check full)
  t=$SECONDS
  sanitize "$log" "${args[@]}" "$out/prog" --batch "$list"
  st=$?
  attribute "$log" > "$log.runs"
  echo "  exe $tool: one process, $((SECONDS - t)) s, exit status $st"
  for c in "${sel[@]}"; do
    want=0; [[ ${flags[c]} == *e1* ]] && want=1
    ok=1 why="" si=0
    for shape in ${shapes[c]}; do
      read -r _ rst rn <<< "$(awk -v id="${names[c]}.$si" '$1 == id' "$log.runs" | tail -n 1)"
      if [ "${rst:-none}" != "$want" ]; then
        ok=0; why+=" shape $si: exit status ${rst:-none}, want $want: $(head -c 300 "$out/err/${names[c]}.$tool.$si.txt" 2>/dev/null);"
      fi
      if [ "${rn:-0}" != 0 ]; then ok=0; why+=" shape $si: $rn sanitizer report lines;"; fi
      si=$((si + 1))
    done
    if [ "$ok" = 1 ]; then passed=$((passed + 1)); echo "PASS ${names[c]} exe $tool (${shapes[c]// /, })"
    else failed=$((failed + 1)); echo "FAIL ${names[c]} exe $tool:$why (log $log)"; fi
  done
  # reports after the last run (leaks at exit), an error the runs do not
  # show, or the batch cut short (a fault: exit status 3)
  read -r _ _ rest_n nccl_n <<< "$(tail -n 1 "$log.runs")"
  [ "${nccl_n:-0}" != 0 ] && echo "  exe $tool: $nccl_n reports of NCCL's own kernel probes left out (tests/gpu/sanitize_attribute.awk)"
  # exit status 97 (a report) must be explained by a run's reports or NCCL's probes
  if [ "${rest_n:-0}" != 0 ] || { [ "$st" != 0 ] && [ "$st" != 97 ]; } ||
     { [ "$st" = 97 ] && [ "${nccl_n:-0}" = 0 ] && ! awk '$3 != 0 { f = 1 } END { exit !f }' "$log.runs"; }; then
    failed=$((failed + 1)); echo "FAIL exe $tool: exit status $st, $rest_n report lines after the last run (log $log)"
    grep '^=========' "$log" | grep -v 'SUMMARY' | head -n 20 | sed 's/^/    /'
  fi
done

# ---- cuh path: one process per shape
for ((c = nexe; c < nc; c++)); do
  tools=(memcheck racecheck synccheck)
  [[ ${flags[c]} == *i* ]] && tools+=(initcheck)
  name=${names[c]#cuh.}
  for tool in "${tools[@]}"; do
    wanted "$name cuh $tool" || continue
    line="$name cuh $tool (${shapes[c]// /, })"
    if [ "$dry" = 1 ]; then echo "RUN  $line"; continue; fi
    t=$SECONDS ok=1 si=0 log=$out/${names[c]}.$tool.log
    : > "$log"
    for shape in ${shapes[c]}; do
      sanitize "$log.$si" --tool "$tool" "$out/cuh" -e "${entries[c]}" < "$out/in/${names[c]}.$si.txt"
      st=$?
      cat "$log.$si" >> "$log"; rm -f "$log.$si"
      [ "$st" = 0 ] || { ok=0; echo "shape $si ($shape): exit status $st" >> "$log"; }
      si=$((si + 1))
    done
    report $ok "$line ($((SECONDS - t)) s)" "$log"
  done
done
echo "sanitize: $((SECONDS - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

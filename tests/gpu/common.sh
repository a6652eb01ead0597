# common.sh: sourced (never run) by the GPU scripts that build against gpuc's
# runtime or load NCCL: tests/gpu/{shard_gpu,shard_lib_gpu,ranks_gpu,sanitize}.sh,
# bench/shard_scale.sh and difftest/gpu.sh. Needs $root (the repository root).
#   gpuc_tools a|so  sets gpuc (.device/prefix/bin/gpuc that tests/gpu/prepare.sh
#                    installs, else build/'s), inc and lib (the prefix's
#                    runtime headers and the folder holding
#                    libgpuc_runtime.a or .so, else the build tree's)
#   find_nccl        exports GPUC_NCCL_LIBRARY when libnccl.so.2 is not on the
#                    loader path but PyTorch's nvidia-nccl wheel has it, and
#                    says which library the run uses
gpuc_tools() {
  local dev=$root/.device
  gpuc=$dev/prefix/bin/gpuc
  [ -x "$gpuc" ] || gpuc=$root/build/driver/gpuc
  inc=$dev/prefix/include lib=$dev/prefix/lib
  [ -f "$lib/libgpuc_runtime.$1" ] || lib=$dev/prefix/lib64
  [ -f "$inc/gpuc_comm.h" ] && [ -f "$lib/libgpuc_runtime.$1" ] || { inc=$root/runtime; lib=$root/build/runtime; }
}
find_nccl() {
  if [ -z "${GPUC_NCCL_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2 '; then
    local w
    w=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
    [ -n "$w" ] && [ -f "$w" ] && export GPUC_NCCL_LIBRARY=$w
  fi
  echo "libnccl: ${GPUC_NCCL_LIBRARY:-libnccl.so.2 from the loader path}"
}

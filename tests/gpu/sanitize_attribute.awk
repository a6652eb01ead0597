# sanitize_attribute.awk: reads the log of one compute-sanitizer run of a gpuc
# executable's --batch (tests/gpu/sanitize.sh) and attributes the sanitizer's
# reports to the runs. Prints "ID STATUS REPORTS" for each of the batch's
# status lines ("ID<tab>STATUS": the reports since the previous one), then
# "- - REPORTS NCCL" for the reports after the last run, NCCL being how many
# reports in the whole log were NCCL's own kernel probes (not counted).
# A report is a "========= " line other than banners, summaries, backtraces
# and "Target application returned an error" (the batch's own exit status,
# which sanitize.sh checks apart). NCCL's probes: at ncclCommInitAll NCCL calls
# cudaFuncGetAttributes on each of its kernels, and those it has no image
# for on this GPU return cudaErrorNoKernelImageForDevice, which NCCL expects
# and handles; memcheck reports each as an API error. Only that error, from
# that call, made by NCCL itself (the first frame below libcuda is in
# libnccl), is left out; the same error from any other caller counts.
BEGIN { FS = "\t" }
function flush() { if (pending) { n++; pending = 0 } }
NF == 2 && $2 ~ /^[0-9]+$/ { flush(); print $1, $2, n + 0; n = 0; next }
/^========= Program hit cudaErrorNoKernelImageForDevice .* on CUDA API call to cudaFuncGetAttributes/ {
  flush(); pending = 1; next
}
pending && /Host Frame:/ {
  if ($0 ~ / in libcuda\.so/) { next }
  if ($0 ~ / in libnccl\.so/) { nccl++ } else { n++ }
  pending = 0; next
}
pending && /Saved host backtrace/ { next }
/^========= / && !/COMPUTE-SANITIZER|SUMMARY|Target application returned an error|^========= *$|^=========     |Saved host backtrace|Host Frame/ { flush(); n++ }
END { flush(); print "-", "-", n + 0, nccl + 0 }

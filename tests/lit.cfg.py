# lit configuration for gpuc. Each test is a file with RUN lines; %gpuc is the
# compiler under test, FileCheck and not come from Debian's llvm-16-tools.
import os
import lit.formats

config.name = "gpuc"
config.test_format = lit.formats.ShTest(execute_external=True)
# --param retries=N: a failing test is run again up to N times; one that
# then passes is "Passed With Retry" (FLAKYPASS), which scripts/run_lit.py
# names in the test command's output. Plain lit runs retry nothing.
config.test_retry_attempts = int(lit_config.params.get("retries", "0"))
config.suffixes = [".gdsl", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gpuc_obj_root, "tests")

config.substitutions.append(("%gpuc", config.gpuc_bin))
config.substitutions.append(("%srcroot", config.gpuc_src_root))
config.substitutions.append(("%objroot", config.gpuc_obj_root))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(("%cuda_home", config.cuda_home))
# what a C client of an instrumented library (sanitizer build) must add
config.substitutions.append(("%sanitize_flags", "-fsanitize=address,undefined" if config.sanitize else ""))
config.substitutions.append(("%nvcc_sanitize_flags", "-Xcompiler -fsanitize=address -Xcompiler -fsanitize=undefined" if config.sanitize else ""))

# Keep the environment small and predictable; sanitizer builds fail on any report.
for var in ["HOME", "TMPDIR", "PATH", "LD_LIBRARY_PATH", "XDG_CACHE_HOME"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# FileCheck and not are found on PATH, from the directory CMake found them in.
tool_dirs = {os.path.dirname(t) for t in (config.filecheck, config.not_tool) if t}
config.environment["PATH"] = os.pathsep.join(sorted(tool_dirs) + [config.environment.get("PATH", "/usr/bin:/bin")])
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:exitcode=99"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1:exitcode=98"
if config.sanitize:
    config.available_features.add("sanitize")
if os.path.exists(os.path.join(config.cuda_home, "lib64", "libnvrtc.so")) or \
   os.path.exists(os.path.join(config.cuda_home, "targets", "x86_64-linux", "lib", "libnvrtc.so")):
    config.available_features.add("nvrtc")
import shutil
if shutil.which("valgrind") and not config.sanitize:
    config.available_features.add("valgrind")
# root: running as root (tests that make their own device nodes with mknod).
if os.geteuid() == 0:
    config.available_features.add("root")
# tmpfs-mount: a small tmpfs can be mounted (root), to fill a directory's disk.
import subprocess, tempfile
_probe = tempfile.mkdtemp(prefix="gpuc-tmpfs-probe.")
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", _probe],
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    subprocess.run(["umount", _probe])
    config.available_features.add("tmpfs-mount")
os.rmdir(_probe)
# no-gpu-driver: libcuda.so.1 cannot be loaded here (CI and developer machines).
import ctypes
try:
    ctypes.CDLL("libcuda.so.1")
except OSError:
    config.available_features.add("no-gpu-driver")

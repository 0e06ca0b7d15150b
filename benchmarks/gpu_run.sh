#!/usr/bin/env bash
# One GPU session's worth of checks, in one command: build for the GPU at hand, the GPU tests
# (skips are failures) and the split-K kernels under compute-sanitizer, the host cost of a call,
# device vs end-to-end time at the sizes where host cost shows, and the shape suite. The result
# files this run wrote and logs.tgz go to $OUT (default: ./gpu-out); short tables are printed.
# It builds for the GPU it finds (FASTGEMM_CUDA_ARCHS overrides) without build isolation, so the
# build requirements must be installed (README, "Development loop"), and needs the test extras,
# CuPy, torch and compute-sanitizer. Exit status 1 names the steps that failed.
#
#   bash benchmarks/gpu_run.sh              # everything (~7 min on an H100 host, build included;
#                                           # the steps' time limits add up to more)
#   GPU_RUN_TESTS=0 bash benchmarks/gpu_run.sh   # benchmarks only
#   GPU_RUN_SUITE="float16 float32" ...     # the shape suites to run (default: both; "" for none)
#   GPU_RUN_OVERHEAD=0 ...                  # skip the host cost and the e2e run
# Where the tree arrives as a copy (its .git, if any, need not match the files), pass
# FASTGEMM_GIT_COMMIT=<sha> FASTGEMM_GIT_CLEAN=1 (they win over git) so that
# the result files still name the commit they measured.
set -o pipefail
export PYTHONUNBUFFERED=1 FASTGEMM_REQUIRE_GPU=1
OUT=${OUT:-gpu-out}
LOGS=$(mktemp -d)  # logs are packed into $OUT/logs.tgz at the end (a device run returns few files)
mkdir -p "$OUT" results
failed=""  # the steps that failed; the exit status is 1 if any did
step() {  # step NAME COMMAND...: run it, remember a failure (timeouts included)
  local name=$1
  shift
  "$@" || failed="$failed $name"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader 2>&1 |
  tee "$LOGS/gpu.txt"
# Build for the GPU at hand unless FASTGEMM_CUDA_ARCHS says otherwise (compute_cap "9.0" -> 90).
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
[ -n "$ARCH" ] || { echo "gpu_run.sh: no GPU found (nvidia-smi)"; exit 3; }
( time FASTGEMM_CUDA_ARCHS=${FASTGEMM_CUDA_ARCHS:-$ARCH} python3 -m pip install --no-build-isolation \
    --no-deps -C build-dir=build/gpu . ) > "$LOGS/build.log" 2>&1 || { tail -30 "$LOGS/build.log"; exit 1; }
tail -4 "$LOGS/build.log"
# A host with several GPUs runs the multi-GPU tests too (their skips are failures then) and the
# multi-GPU benchmark (GPU_RUN_MULTI=0 skips it).
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$NGPU" -ge 2 ] && export FASTGEMM_REQUIRE_GPUS=$NGPU
if [ "${GPU_RUN_TESTS:-1}" = 1 ]; then
  step gpu-tests bash -o pipefail -c "timeout 420 python3 -m pytest -q -m gpu tests 2>&1 | tee '$LOGS/gpu-tests.log' | tail -15"
  # The split-K and stream-K specialists, v31's split last round and the tf32 rungs under
  # compute-sanitizer (small problems and a split
  # decode shape).
  # racecheck walks every shared-memory access: it needs about twice memcheck's time (it ran past
  # 240 s on an H100 once v31 joined the list).
  for tool in memcheck racecheck; do
    limit=240
    [ "$tool" = racecheck ] && limit=480
    step "$tool" bash -o pipefail -c "timeout $limit compute-sanitizer --tool $tool --error-exitcode 1 \
      python3 benchmarks/sanitize_hopper.py split_k,stream_k,split_last,tf32 --small 2>&1 | tail -2 | tee -a '$LOGS/sanitize.log'"
  done
fi
[ "${GPU_RUN_OVERHEAD:-1}" = 1 ] && step overhead bash -o pipefail -c "python3 -m fastgemm.bench --overhead --out results 2>&1 | tee '$LOGS/overhead.log' | tail -30"
[ "${GPU_RUN_OVERHEAD:-1}" = 1 ] && step e2e bash -o pipefail -c "python3 -m fastgemm.bench --dtype float16 --sizes 1024,2048 --include-auto --timing both \
  --kernels 'v20' --out '$LOGS/e2e' --no-plot 2>&1 | tee '$LOGS/e2e.log' | tail -20"
if [ "$NGPU" -ge 2 ] && [ "${GPU_RUN_MULTI:-1}" = 1 ]; then
  step multi-gpu bash -o pipefail -c "timeout 400 python3 -m fastgemm.bench --multi-gpu --out results 2>&1 | tee '$LOGS/multigpu.log' | tail -25"
fi
for dtype in ${GPU_RUN_SUITE-float16 float32}; do
  step "suite-$dtype" timeout 240 python3 -m fastgemm.bench --suite --dtype "$dtype" --out results \
    > "$LOGS/suite-$dtype.log" 2>&1
  grep -A10 "per category" "$LOGS/suite-$dtype.log" || tail -5 "$LOGS/suite-$dtype.log"
done
# The result files this run wrote (JSON, and the suite plots the README shows), and the logs.
find results \( -name '*.json' -o -name 'suite-*.png' \) -newer "$LOGS/gpu.txt" -exec cp {} "$OUT/" \;
tar czf "$OUT/logs.tgz" -C "$LOGS" .
if [ -n "$failed" ]; then
  echo "gpu_run.sh: failed:$failed (logs in $OUT/logs.tgz)"
  exit 1
fi

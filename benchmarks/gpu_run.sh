#!/usr/bin/env bash
# One GPU session's worth of checks, in one command: build for the GPU at hand, the GPU tests
# (skips are failures) and the split-K kernels under compute-sanitizer, the host cost of a call,
# device vs end-to-end time at the sizes where host cost shows, and the shape suite. The result
# files this run wrote and logs.tgz go to $OUT (default: ./gpu-out); short tables are printed.
#
#   bash benchmarks/gpu_run.sh              # everything (~7 min on an H100 host, build included)
#   GPU_RUN_TESTS=0 bash benchmarks/gpu_run.sh   # benchmarks only
#   GPU_RUN_SUITE="float16 float32" ...     # the shape suites to run (default: both; "" for none)
# Where the tree arrives as a copy (its .git, if any, need not match the files), pass
# FASTGEMM_GIT_COMMIT=<sha> FASTGEMM_GIT_CLEAN=1 (they win over git) so that
# the result files still name the commit they measured.
set -o pipefail
export PYTHONUNBUFFERED=1 FASTGEMM_REQUIRE_GPU=1
OUT=${OUT:-gpu-out}
LOGS=$(mktemp -d)  # logs are packed into $OUT/logs.tgz at the end (a device run returns few files)
mkdir -p "$OUT" results
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader | tee "$LOGS/gpu.txt"
( time FASTGEMM_CUDA_ARCHS=${FASTGEMM_CUDA_ARCHS:-90} python3 -m pip install --no-build-isolation \
    --no-deps -C build-dir=build/gpu . ) > "$LOGS/build.log" 2>&1 || { tail -30 "$LOGS/build.log"; exit 1; }
tail -4 "$LOGS/build.log"
if [ "${GPU_RUN_TESTS:-1}" = 1 ]; then
  timeout 300 python3 -m pytest -q -m gpu tests 2>&1 | tee "$LOGS/gpu-tests.log" | tail -15
  # The split-K specialists under compute-sanitizer (small problems and a split decode shape).
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool python3 benchmarks/sanitize_hopper.py split_k --small \
      2>&1 | tail -2 | tee -a "$LOGS/sanitize.log"
  done
fi
python3 -m fastgemm.bench --overhead --out results 2>&1 | tee "$LOGS/overhead.log" | tail -30
python3 -m fastgemm.bench --dtype float16 --sizes 1024,2048 --include-auto --timing both \
  --kernels 'v20' --out "$LOGS/e2e" --no-plot 2>&1 | tee "$LOGS/e2e.log" | tail -20
for dtype in ${GPU_RUN_SUITE-float16 float32}; do
  timeout 240 python3 -m fastgemm.bench --suite --dtype "$dtype" --out results > "$LOGS/suite-$dtype.log" 2>&1
  grep -A10 "per category" "$LOGS/suite-$dtype.log"
done
# The result files this run wrote (the README is generated from them), and the logs.
find results -name '*.json' -newer "$LOGS/gpu.txt" -exec cp {} "$OUT/" \;
tar czf "$OUT/logs.tgz" -C "$LOGS" .

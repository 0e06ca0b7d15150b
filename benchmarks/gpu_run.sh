#!/usr/bin/env bash
# One GPU session's worth of checks, in one command: build for the GPU at hand, the GPU tests
# (skips are failures), the host cost of a call, and device vs end-to-end time at the sizes where
# host cost shows. Logs and result files go to $OUT (default: ./gpu-out); a short table is printed
# last.
#
#   bash benchmarks/gpu_run.sh              # everything (~6-8 min on an H100 host, build included)
#   GPU_RUN_TESTS=0 bash benchmarks/gpu_run.sh   # benchmarks only
# Where the tree arrives as a copy (its .git, if any, need not match the files), pass
# FASTGEMM_GIT_COMMIT=<sha> FASTGEMM_GIT_CLEAN=1 (they win over git) so that
# the result files still name the commit they measured.
set -o pipefail
export PYTHONUNBUFFERED=1 FASTGEMM_REQUIRE_GPU=1
OUT=${OUT:-gpu-out}
mkdir -p "$OUT" results
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader | tee "$OUT/gpu.txt"
( time FASTGEMM_CUDA_ARCHS=${FASTGEMM_CUDA_ARCHS:-90} python3 -m pip install --no-build-isolation \
    --no-deps -C build-dir=build/gpu . ) > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
tail -4 "$OUT/build.log"
if [ "${GPU_RUN_TESTS:-1}" = 1 ]; then
  timeout 300 python3 -m pytest -q -m gpu tests 2>&1 | tee "$OUT/gpu-tests.log" | tail -15
fi
python3 -m fastgemm.bench --overhead --out results 2>&1 | tee "$OUT/overhead.log" | tail -30
python3 -m fastgemm.bench --dtype float16 --sizes 1024,2048 --include-auto --timing both \
  --kernels 'v20' --out "$OUT/e2e" --no-plot 2>&1 | tee "$OUT/e2e.log" | tail -20
cp results/overhead-*.json "$OUT/" 2>/dev/null || true  # at most 8 files come back from a device run

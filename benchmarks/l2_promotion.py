"""The TMA rungs' L2 promotion on operands whose rows are off 128 bytes.

    python benchmarks/l2_promotion.py 1000x1000x1000,1512x1512x1512,14916x664x6424 --out results/sweeps
    python benchmarks/l2_promotion.py 1000x1000x1000 --dtype bfloat16 --out results/sweeps
    python benchmarks/l2_promotion.py 1004x1004x1004,2044x2044x2044 --dtype tf32 --out results/sweeps

Row-major operands of each M x N x K. fp16/bf16: auto's kernel read in place
(FASTGEMM_DEV_REALIGN=0) with the tensor maps' promotion as hopper/tensor_map.cu chooses it
("rule": 128 bytes for rows only 16-byte aligned, 256 elsewhere) and forced to 256 and 128
(FASTGEMM_DEV_L2PROMO), beside auto's copies of B and of both operands (=B, =AB) with the rule's
promotion, auto as it decides, and torch.matmul. tf32: sgemm(precision="tf32") with the rule's
promotion and with 256. Device time: CUDA events around back-to-back calls over input sets of at
least 3x the L2 (at most 64 sets), the modes in interleaved rounds (so that clock drift
moves them alike), median of 5 rounds; every mode's output is checked against float64 first.
Writes l2-promotion-<dtype>-<gpu>.json.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import cupy as cp
import torch

import fastgemm

HALF_MODES = [("rule", "0"), ("256", "0"), ("128", "0"), ("rule", "B"), ("rule", "AB"), ("auto", "")]
TF32_MODES = [("rule", ""), ("256", "")]


def set_mode(promotion: str, realign: str) -> None:
    for var, value in (("FASTGEMM_DEV_L2PROMO", promotion), ("FASTGEMM_DEV_REALIGN", realign)):
        if value in ("", "rule", "auto") or (var == "FASTGEMM_DEV_REALIGN" and promotion == "auto"):
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    fastgemm._C._clear_plan_cache()  # the plans and the promotion setting are read again


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes", help="MxNxK,...")
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "tf32"])
    ap.add_argument("--out", default="results/sweeps")
    args = ap.parse_args()
    tf32 = args.dtype == "tf32"
    tdt = torch.float32 if tf32 else getattr(torch, args.dtype)
    modes = TF32_MODES if tf32 else HALF_MODES
    props = cp.cuda.runtime.getDeviceProperties(0)
    gpu, l2_bytes = props["name"].decode(), int(props["l2CacheSize"])
    ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()

    def gemm(a, b, c):
        if tf32:
            fastgemm.sgemm(a, b, c, precision="tf32")
        else:
            fastgemm.hgemm(a, b, c)

    names = [f"{p}/{r}" for p, r in modes] + ([] if tf32 else ["torch"])
    print(f"{gpu}, {args.dtype}, device us (median of 5 interleaved rounds)")
    print(f"{'shape':18s} {'kernel':34s} " + " ".join(f"{n:>9s}" for n in names))
    rows = []
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        set_bytes = tdt.itemsize * (M * K + K * N + M * N)
        nsets = max(2, min(64, -(-3 * l2_bytes // set_bytes)))  # at least 3x the L2, if it fits
        sets = [
            (
                torch.randn(M, K, device="cuda", dtype=tdt),
                torch.randn(K, N, device="cuda", dtype=tdt),
                torch.empty(M, N, device="cuda", dtype=tdt),
            )
            for _ in range(nsets)
        ]
        ref = sets[0][0].double() @ sets[0][1].double()
        set_mode(*modes[0])
        dtype_name = "float32" if tf32 else args.dtype
        kernel = fastgemm.select(M, N, K, dtype_name, **({"precision": "tf32"} if tf32 else {}))
        row: dict = {"M": M, "N": N, "K": K, "kernel": kernel.kernel.name, "input_sets": nsets}
        set_mode("auto", "")
        row["kernel_auto"] = fastgemm.select(
            M, N, K, dtype_name, **({"precision": "tf32"} if tf32 else {})
        ).kernel.name
        reps: dict[str, int] = {}
        for (p, r), name in zip(modes, names):
            set_mode(p, r)
            c = sets[0][2]
            c.fill_(float("nan"))
            gemm(sets[0][0], sets[0][1], c)
            torch.cuda.synchronize()
            err = float((c.double() - ref).abs().max() / ref.abs().max())
            if not err < (2e-3 if tf32 else 1e-2):
                raise SystemExit(f"{shape} {name}: relative error {err}")
            ev0.record()
            gemm(*sets[0])
            ev1.record()
            ev1.synchronize()
            reps[name] = max(3, min(200, int(15.0 / max(cp.cuda.get_elapsed_time(ev0, ev1), 1e-3))))
        reps["torch"] = reps[names[0]]
        times: dict[str, list[float]] = {n: [] for n in names}
        for rnd in range(5):
            for (p, r), name in zip(modes + [("", "")], names):
                if name == "torch":
                    fn = lambda a, b, c: torch.matmul(a, b, out=c)
                else:
                    set_mode(p, r)
                    fn = gemm
                n = reps[name]
                fn(*sets[0])
                ev0.record()
                for i in range(n):
                    fn(*sets[(rnd * n + i) % nsets])
                ev1.record()
                ev1.synchronize()
                times[name].append(cp.cuda.get_elapsed_time(ev0, ev1) * 1e3 / n)
        for name in names:
            row[name] = sorted(times[name])[2]
        rows.append(row)
        print(f"{shape:18s} {row['kernel'][:34]:34s} " + " ".join(f"{row[n]:9.1f}" for n in names))
        del sets, ref
        torch.cuda.empty_cache()
    set_mode("auto", "")
    slug = gpu.lower().replace(" ", "-")
    path = Path(args.out) / f"l2-promotion-{args.dtype}-{slug}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    command = f"python benchmarks/l2_promotion.py {args.shapes} --dtype {args.dtype}"
    path.write_text(json.dumps({"meta": {"gpu": gpu, "command": command}, "results": rows}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

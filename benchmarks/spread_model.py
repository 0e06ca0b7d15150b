"""A fluid model of one-process spread schedules (``fastgemm.distributed.gemm``, a split by rows,
operands on home), for choosing a schedule before spending device time on it (benchmarks/NOTES.md,
twenty-fourth session).

    python benchmarks/spread_model.py --link 450 --one-ms 11.45

Every copy and GEMM is an operation on an in-order stream that starts once the operations it
waits for are done. Copies share links fairly: a copy runs at the smaller of its source's egress
and its destination's ingress (``--link`` GB/s each) divided by the copies using them at that
moment. GEMMs run at one GPU's rate (``--one-ms``: an N^3 GEMM's time) divided by an efficiency
by output size (measured on an H100 with auto at K = 16384: 0.54-0.71 at about 1M outputs, 0.85
at 2M, 0.92-0.95 from 4M up). Three schedules of the remote pieces (each about (1 - share) / 3 of
the rows; home's GEMM runs its share alone):

- ``bands``: today's: a first band of rows by column chunks, then one band over all of B, then a
  tail band (``_Remote``);
- ``lshape``: bands of A rows grow with B's chunks; each step a row strip (the new band against
  the chunks so far) and a column strip (the bands so far against the new chunk);
- ``ksplit``: slices of K; each slice of A's rows and B's rows enables the whole piece over that
  slice (fp32 partial sums kept on the remote device), the last slice computed by bands of rows
  that go back as they finish.

Calibration (4 x H100, 16384^3 fp16, one GPU 11.45 ms in that run): with 450 GB/s links and
home's copies on one stream (as ``_Run`` queues them) the model gives ``bands`` 4.72, 4.62 and
4.49 ms at home shares 0.27, 0.30 and 0.33, against 4.77, 4.64 and 4.50 measured; with 370 GB/s (the peer-copy
probe's figure) 15% more. A known miss: it has home's copies on a stream per device
(``--out-streams``) 6% faster, where a probe measured them level or 2% slower.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field

REMOTES = (1, 2, 3)


@dataclass
class _Op:
    stream: str
    left: float  # bytes (copy) or seconds (GEMM)
    deps: list[int]
    src: int = -1  # -1: a GEMM
    dst: int = -1


@dataclass
class Model:
    link: float  # bytes per second, each direction of a GPU's links
    one: float  # seconds of one GPU's N^3 GEMM
    n: int = 16384
    one_out: bool = True  # home's copies out on one stream (as _Run does), else one per device
    ops: list[_Op] = field(default_factory=list)

    def copy(self, stream: str, src: int, dst: int, nbytes: float, deps: list[int] | None = None) -> int:
        if self.one_out and src == 0:
            stream = "out"
        self.ops.append(_Op(stream, nbytes, deps or [], src, dst))
        return len(self.ops) - 1

    def gemm(self, stream: str, m: float, n: float, k: float, deps: list[int] | None = None) -> int:
        e = m * n
        eff = 0.6 if e <= 1.4e6 else 0.85 if e <= 2.7e6 else 0.92 if e <= 4.5e6 else 0.95
        self.ops.append(_Op(stream, self.one * m * n * k / self.n**3 / eff + 8e-6, deps or []))
        return len(self.ops) - 1

    def run(self) -> list[float]:
        """Each operation's finishing time (seconds)."""
        t, done = 0.0, [math.nan] * len(self.ops)
        queues: dict[str, list[int]] = {}
        for i, op in enumerate(self.ops):
            queues.setdefault(op.stream, []).append(i)
        while True:
            active = []
            for q in queues.values():
                while q and not math.isnan(done[q[0]]):
                    q.pop(0)
                if q and all(not math.isnan(done[d]) for d in self.ops[q[0]].deps):
                    active.append(q[0])
            if not active:
                return done
            out: dict[int, int] = {}
            into: dict[int, int] = {}
            for i in active:
                if self.ops[i].src >= 0:
                    out[self.ops[i].src] = out.get(self.ops[i].src, 0) + 1
                    into[self.ops[i].dst] = into.get(self.ops[i].dst, 0) + 1
            rate = {
                i: 1.0 if op.src < 0 else self.link / max(out[op.src], into[op.dst])
                for i, op in ((i, self.ops[i]) for i in active)
            }
            dt = min(self.ops[i].left / rate[i] for i in active)
            t += dt
            for i in active:
                self.ops[i].left -= rate[i] * dt
                if self.ops[i].left <= 1e-9 * rate[i]:
                    done[i] = t


def _rows(share: float, n: int) -> int:
    return round((1 - share) * n / len(REMOTES) / 16) * 16


def _b_chunk(m: Model, c: int, nbytes: float, have: dict[tuple[int, str, int], int]) -> None:
    """Chunk c of a shared operand leaves home once (to device 1 + c % 3); the others copy it
    from there."""
    src = REMOTES[c % len(REMOTES)]
    have[(src, "b", c)] = m.copy(f"out{src}", 0, src, nbytes)
    for d in REMOTES:
        if d != src:
            have[(d, "b", c)] = m.copy(f"relay{d}", src, d, nbytes, [have[(src, "b", c)]])


def bands(m: Model, share: float, first: int = 2048, chunk: int = 2048, tail: int = 512) -> float:
    n, rows = m.n, _rows(share, m.n)
    home = m.gemm("home", m.n - len(REMOTES) * rows, n, n)
    big = (rows - first - tail) // 128 * 128
    sizes = [first, big, rows - first - big]
    have: dict[tuple[int, str, int], int] = {}
    for i in range(3):
        for d in REMOTES:
            have[(d, "a", i)] = m.copy(f"out{d}", 0, d, sizes[i] * n * 2)
        if i == 0:
            for c in range(n // chunk):
                _b_chunk(m, c, chunk * n * 2, have)
    ends = []
    for d in REMOTES:
        allb = [have[(d, "b", c)] for c in range(n // chunk)]
        for c in range(n // chunk):
            g = m.gemm(f"gemm{d}", first, chunk, n, [have[(d, "a", 0)], allb[c]])
            ends.append(m.copy(f"back{d}", d, 0, first * chunk * 2, [g]))
        for i in (1, 2):
            g = m.gemm(f"gemm{d}", sizes[i], n, n, [have[(d, "a", i)], *allb])
            ends.append(m.copy(f"back{d}", d, 0, sizes[i] * n * 2, [g]))
    done = m.run()
    return max(done[home], *(done[e] for e in ends))


def lshape(m: Model, share: float, steps: int = 8, chunk: int = 1024) -> float:
    n, rows = m.n, _rows(share, m.n)
    home = m.gemm("home", m.n - len(REMOTES) * rows, n, n)
    sizes = [rows // steps] * steps
    sizes[-1] += rows - sum(sizes)
    chunks = n // chunk
    if steps > chunks:
        raise ValueError(f"{steps} bands need at least as many chunks ({chunks} of {chunk} columns)")
    have: dict[tuple[int, str, int], int] = {}
    for s in range(chunks):
        if s < steps:
            for d in REMOTES:
                have[(d, "a", s)] = m.copy(f"out{d}", 0, d, sizes[s] * n * 2)
        _b_chunk(m, s, chunk * n * 2, have)
    ends = []
    for d in REMOTES:
        done_rows = 0
        for s in range(chunks):
            if s < steps:
                deps = [have[(d, "a", s)], *(have[(d, "b", j)] for j in range(s + 1))]
                g = m.gemm(f"gemm{d}", sizes[s], chunk * (s + 1), n, deps)
                ends.append(m.copy(f"back{d}", d, 0, sizes[s] * chunk * (s + 1) * 2, [g]))
            if done_rows:
                g = m.gemm(f"gemm{d}", done_rows, chunk, n, [have[(d, "b", s)]])
                ends.append(m.copy(f"back{d}", d, 0, done_rows * chunk * 2, [g]))
            if s < steps:
                done_rows += sizes[s]
    done = m.run()
    return max(done[home], *(done[e] for e in ends))


def ksplit(m: Model, share: float, slices: list[int], last_bands: int = 8) -> float:
    n, rows = m.n, _rows(share, m.n)
    home = m.gemm("home", m.n - len(REMOTES) * rows, n, n)
    have: dict[tuple[int, str, int], int] = {}
    for c, k in enumerate(slices):
        for d in REMOTES:
            have[(d, "a", c)] = m.copy(f"out{d}", 0, d, rows * k * 2)
        _b_chunk(m, c, k * n * 2, have)
    ends = []
    last = len(slices) - 1
    for d in REMOTES:
        for c, k in enumerate(slices[:-1]):
            m.gemm(f"gemm{d}", rows, n, k / 0.95, [have[(d, "a", c)], have[(d, "b", c)]])  # fp32 C traffic
        for _ in range(last_bands):
            deps = [have[(d, "a", last)], have[(d, "b", last)]]
            g = m.gemm(f"gemm{d}", rows / last_bands, n, slices[-1] / 0.95, deps)
            ends.append(m.copy(f"back{d}", d, 0, rows / last_bands * n * 2, [g]))
    done = m.run()
    return max(done[home], *(done[e] for e in ends))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--link", type=float, default=450.0, help="GB/s each direction of a GPU's links")
    ap.add_argument("--one-ms", type=float, default=11.45, help="one GPU's 16384^3 fp16 time (ms)")
    ap.add_argument("--out-streams", action="store_true", help="home's copies on a stream per device")
    args = ap.parse_args()

    def best(name: str, runs: dict[str, float]) -> None:
        key = min(runs, key=lambda k: runs[k])
        t = runs[key] * 1e3
        print(f"{name:8s} {t:6.2f} ms  {args.one_ms / t:4.2f}x  ({key})")

    def fresh() -> Model:
        return Model(args.link * 1e9, args.one_ms * 1e-3, one_out=not args.out_streams)

    shares = (0.26, 0.28, 0.30, 0.33)
    print(f"bands at share 0.30 (the calibration): {bands(fresh(), 0.30) * 1e3:.2f} ms")
    best("bands", {f"share {s}": bands(fresh(), s) for s in shares})
    best(
        "lshape",
        {
            f"share {s}, {st} steps, {c} cols": lshape(fresh(), s, st, c)
            for s in shares
            for st in (4, 8)
            for c in (1024, 2048)
        },
    )
    plans = {"16 x 1024": [1024] * 16, "12 x 1024 + 4096": [1024] * 12 + [4096]}
    best("ksplit", {f"share {s}, K {p}": ksplit(fresh(), s, v) for s in shares for p, v in plans.items()})


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""flash_torch.py: times torch.nn.functional.scaled_dot_product_attention on the shapes of the
FLASH lines flash_bench prints (read from the file given, or standard input), fp16, [B, H, L, D]
with B * H = bh (B = 2), causal as the line says; the fastest of the backends torch has here
(its default choice, and flash / efficient / cudnn asked for one by one) is the figure. Prints
each case (one line per tilec kernel: flash_fwd with P in registers, flash_smem_p with P through
shared memory) with both times and ratio = torch ms / tilec ms (> 1: tilec is faster). Without
torch (or without a CUDA device for it) it says so and exits 0, the tilec lines standing alone."""
import re
import sys

lines = open(sys.argv[1]).read().splitlines() if len(sys.argv) > 1 else sys.stdin.read().splitlines()
cases = []
for ln in lines:
    m = re.match(r"FLASH d=(\d+) causal=(\d) bh=(\d+) l=(\d+) ms=([0-9.]+).*?(?:kernel=(\w+))?$", ln)
    if m:
        cases.append(tuple(int(x) for x in m.groups()[:4]) + (float(m.group(5)), m.group(6) or "tilec"))
try:
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        raise ImportError("torch has no CUDA device here")
except Exception as e:  # noqa: BLE001 - any import failure means: no comparison
    print(f"flash_torch: no torch comparison ({e})")
    sys.exit(0)


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


backends = [("default", None)]
try:
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for name in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
        if hasattr(SDPBackend, name):
            backends.append((name.lower(), getattr(SDPBackend, name)))
except ImportError:
    sdpa_kernel = None

print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
timed_torch = {}
for d, causal, bh, l, tms, kname in cases:
    if (d, causal, bh, l) in timed_torch:
        best, bestname = timed_torch[(d, causal, bh, l)]
        fl = 4.0 * bh * l * l * d * (0.5 if causal else 1.0)
        print(f"RATIO d={d} causal={causal} bh={bh} l={l}: {kname} {tms:.3f} ms ({fl / tms / 1e9:.1f} TFLOP/s), "
              f"torch sdpa {best:.3f} ms ({fl / best / 1e9:.1f} TFLOP/s, {bestname}), ratio {best / tms:.3f}")
        continue
    B = 2
    q, k, v = (torch.randn(B, bh // B, l, d, device="cuda", dtype=torch.float16) for _ in range(3))
    best, bestname = None, None
    for name, be in backends:
        try:
            if be is None:
                ms = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal)))
            else:
                with sdpa_kernel([be]):
                    ms = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal)))
        except Exception:  # noqa: BLE001 - a backend that cannot run this case
            continue
        if best is None or ms < best:
            best, bestname = ms, name
    del q, k, v
    if best is None:
        timed_torch[(d, causal, bh, l)] = (float("inf"), "none")
        print(f"d={d} causal={causal} bh={bh} l={l}: tilec {tms:.3f} ms, torch: no backend ran")
        continue
    timed_torch[(d, causal, bh, l)] = (best, bestname)
    fl = 4.0 * bh * l * l * d * (0.5 if causal else 1.0)
    print(f"RATIO d={d} causal={causal} bh={bh} l={l}: {kname} {tms:.3f} ms ({fl / tms / 1e9:.1f} TFLOP/s), "
          f"torch sdpa {best:.3f} ms ({fl / best / 1e9:.1f} TFLOP/s, {bestname}), ratio {best / tms:.3f}")

#!/usr/bin/env python3
# triton_cold.py: cold compile time of Triton kernels equivalent to tilec's samples/gemm.tile
# (f16 C = A B, f32 accumulation, 128x128x32 tiles, 3 stages, 4 warps) and samples/copy.tile
# (128x64 tiles), for comparison with tilec's JIT in the same run (gpu_bench.c reads this).
# Triton's cache directory is a fresh empty one, so the compile is cold; the figure is the
# wall time of JITFunction.warmup (compile, no launch) in a process where Triton is already
# imported and initialised by a warm-up compile of a different tiny kernel.
# Output lines: "TRITON <what> <ms> ms <note>" or "TRITON unavailable: <reason>".
import os
import sys
import tempfile
import time

cache = tempfile.mkdtemp(prefix="triton_cold_")
os.environ["TRITON_CACHE_DIR"] = cache  # before triton reads it

try:
    import triton
    import triton.language as tl
except Exception as e:  # ImportError, or a broken install
    print("TRITON unavailable: import triton failed: %s" % str(e).splitlines()[0][:200])
    sys.exit(0)


@triton.jit
def tiny(x_ptr):
    tl.store(x_ptr, 1.0)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def copy2d(a_ptr, b_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(1) * BM + tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    off = rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(b_ptr + off, tl.load(a_ptr + off, mask=mask), mask=mask)


class FakeTensor:
    """a pointer argument for warmup when torch is absent"""
    def __init__(self, dtype):
        self.dtype = dtype

    def data_ptr(self):
        return 0


def pointers(n, how):
    if how == "torch":
        import torch
        return [torch.empty(1 << 20, dtype=torch.float16, device="cuda") for _ in range(n)], \
            [torch.empty(16, dtype=torch.float32, device="cuda")]
    if how == "tl.dtype":
        return [tl.float16] * n, [tl.float32]
    return [FakeTensor("torch.float16")] * n, [FakeTensor("torch.float32")]


def run(how):
    p16, p32 = pointers(3, how)
    t0 = time.perf_counter()
    tiny.warmup(p32[0], grid=(1,))
    t_tiny = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    matmul.warmup(p16[0], p16[1], p16[2], 4096, 4096, 4096, 4096, 4096, 4096,
                  BM=128, BN=128, BK=32, num_warps=4, num_stages=3, grid=(32, 32))
    t_mm = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    copy2d.warmup(p16[0], p16[1], 4096, 4096, BM=128, BN=64, num_warps=4, grid=(64, 32))
    t_copy = (time.perf_counter() - t0) * 1e3
    return t_tiny, t_mm, t_copy


def main():
    errors = []
    hows = []
    try:
        import torch
        if torch.cuda.is_available():
            hows.append("torch")
    except Exception:
        pass
    hows += ["tl.dtype", "fake"]
    for how in hows:
        try:
            t_tiny, t_mm, t_copy = run(how)
        except Exception as e:
            errors.append("%s: %s" % (how, str(e).splitlines()[0][:160] if str(e) else type(e).__name__))
            continue
        note = "triton %s, warmup() into an empty cache, args via %s; first compile in the " \
               "process (tiny kernel, includes start-up) %.1f ms" % (triton.__version__, how, t_tiny)
        print("TRITON matmul_128x128x32_3stages %.1f ms %s" % (t_mm, note))
        print("TRITON copy2d_128x64 %.1f ms %s" % (t_copy, note))
        return
    print("TRITON unavailable: triton %s imported but warmup failed (%s)"
          % (getattr(triton, "__version__", "?"), "; ".join(errors)))


if __name__ == "__main__":
    try:
        main()
    finally:
        import shutil
        shutil.rmtree(cache, ignore_errors=True)

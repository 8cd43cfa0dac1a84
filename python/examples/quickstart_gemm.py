"""The GEMM of TileLang's quick start, with tilec from Python.

TileLang writes the kernel as a Python function (T.Kernel, T.alloc_shared, T.alloc_fragment,
T.Pipelined, T.copy, T.gemm); tilec's kernel is the same program in its tile language, the
block sizes given as -D values. Then: the CUDA C it generates, its layouts, a run on the CPU
target with NumPy arrays checked against NumPy, and, when PyTorch with CUDA is there, a GPU
launch with torch tensors checked against torch (as TileLang's example does).

    PYTHONPATH=python TILEC_LIBRARY=build/libtilec.so python3 python/examples/quickstart_gemm.py
"""
import numpy as np

import tilec

MATMUL = """
const block_M = 128, block_N = 128, block_K = 32;

kernel matmul(A: f16[M, K], B: f16[K, N], C: f16[M, N])
    grid(cdiv(N, block_N), cdiv(M, block_M)) threads(128)
{
    shared A_shared: f16[block_M, block_K];
    shared B_shared: f16[block_K, block_N];
    local  C_local: f32[block_M, block_N];
    clear(C_local);
    for ko in pipeline(cdiv(K, block_K), stages = 3) {
        copy(A[by * block_M, ko * block_K], A_shared);
        copy(B[ko * block_K, bx * block_N], B_shared);
        gemm(A_shared, B_shared, C_local);
    }
    copy(C_local, C[by * block_M, bx * block_N]);
}
"""

prog = tilec.compile(MATMUL, defines={"block_M": 128, "block_N": 128, "block_K": 32})
kernel = prog["matmul"]
print(kernel)
print("the CUDA C:", len(prog.code.splitlines()), "lines; its launch:", kernel.threads, "threads,",
      kernel.smem_bytes, "bytes of shared memory")
what = ""
for line in prog.layouts.splitlines():  # each buffer's and statement's layout, CuTe form
    if line.startswith("  ") and not line.startswith("    "):
        what = line.strip()
    elif line.strip().startswith("cute:"):
        print("  %-30s %s" % (what, line.strip()[6:]))

# the CPU target: NumPy arrays, sizes taken from their shapes
M, N, K = 256, 384, 192
rng = np.random.default_rng(0)
a = rng.standard_normal((M, K)).astype(np.float16)
b = rng.standard_normal((K, N)).astype(np.float16)
c = np.empty((M, N), np.float16)
kernel.run_cpu(a, b, c)
ref_c = a.astype(np.float32) @ b.astype(np.float32)
np.testing.assert_allclose(c.astype(np.float32), ref_c, rtol=1e-2, atol=1e-2)
print("CPU target: M=%d N=%d K=%d matches NumPy" % (M, N, K))

try:
    import torch
except ImportError:
    torch = None
if torch is not None and torch.cuda.is_available():
    M = N = K = 1024
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    kernel.launch(a, b, c)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a @ b, rtol=1e-2, atol=1e-2)
    print("GPU: M=N=K=1024 matches torch")
else:
    print("no PyTorch with CUDA here: the GPU launch is skipped")

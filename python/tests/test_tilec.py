"""Tests of the tilec Python package on the CPU target (NumPy, no GPU).

Run from the repository root (make test does):
    PYTHONPATH=python TILEC_LIBRARY=build/libtilec.so python3 -m unittest discover -s python/tests
"""
import os
import unittest

import numpy as np

import tilec

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GEMM = os.path.join(ROOT, "samples", "gemm.tile")
ELEMENTWISE = os.path.join(ROOT, "samples", "elementwise.tile")
HEAD = os.path.join(ROOT, "test", "strided", "head.tile")

SCALE = """
kernel scale(X: f32[N], Y: f32[N], a: f32)
    grid(cdiv(N, 64)) threads(64)
{
    assume(N % 4 == 0);
    local x: f32[64];
    copy(X[bx * 64], x);
    for i in parallel(64) {
        x[i] = x[i] * a + 1.0;
    }
    copy(x, Y[bx * 64]);
}
"""

FIXED = """
kernel rows(X: f32[N, 8])
    grid(cdiv(N, 32)) threads(32)
{
    local x: f32[32, 8];
    copy(X[bx * 32, 0], x);
    for i, j in parallel(32, 8) {
        x[i, j] = x[i, j] + 1.0;
    }
    copy(x, X[bx * 32, 0]);
}
"""


def small_ints(rng, shape):
    # integer-valued f16 inputs: every gemm sum is exact in f32 and in f16
    return rng.integers(-2, 3, shape).astype(np.float16)


class CudaFake:
    """An object with only __cuda_array_interface__ (as PyTorch CUDA tensors and CuPy
    arrays have); its pointer is never dereferenced by the checks."""

    def __init__(self, shape, typestr="<f2", strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (0x1000, False),
                                         "strides": strides, "version": 3}


class DLPackOnly:
    """An object with only __dlpack__ (a CPU DLPack producer), wrapping a NumPy array."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class TestCompile(unittest.TestCase):
    def test_code_and_layouts(self):
        p = tilec.compile_file(GEMM)
        self.assertIn("__global__", p.code)
        self.assertIn('extern "C"', p.code)
        self.assertIn("cute:", p.layouts)
        self.assertIn("local acc: f32[128, 128]", p.layouts)
        self.assertEqual((p.target, p.arch), ("cuda", "sm_80"))

    def test_defines_and_arch(self):
        a = tilec.compile_file(GEMM)
        b = tilec.compile_file(GEMM, defines={"BK": 64})
        self.assertNotEqual(a["gemm"].smem_bytes, b["gemm"].smem_bytes)
        c = tilec.compile_file(GEMM, defines=["BM=64"], arch="sm_90a")
        self.assertEqual(c.arch, "sm_90a")
        self.assertIn("wgmma", c.code)
        h = tilec.compile_file(GEMM, target="hip")
        self.assertIn("hip", h.code.lower())
        self.assertEqual(h.target, "hip")

    def test_memory_cache(self):
        self.assertIs(tilec.compile(SCALE), tilec.compile(SCALE))
        self.assertIsNot(tilec.compile(SCALE), tilec.compile(SCALE, arch="sm_90"))

    def test_errors(self):
        with self.assertRaises(tilec.TilecError) as cm:
            tilec.compile("kernel k(", filename="bad.tile")
        self.assertEqual(cm.exception.status, "TILEC_ERR_COMPILE")
        self.assertRegex(str(cm.exception), r"bad\.tile:1:\d+: error: ")
        with self.assertRaises(tilec.TilecError) as cm:
            tilec.compile(SCALE, arch="sm_99")
        self.assertEqual(cm.exception.status, "TILEC_ERR_ARG")
        with self.assertRaises(tilec.TilecError) as cm:
            tilec.compile_file(GEMM, defines={"BK": "x"})
        self.assertEqual(cm.exception.status, "TILEC_ERR_COMPILE")
        self.assertIn("-D BK=x: 'x' is not an integer or a float", str(cm.exception))
        with self.assertRaises(tilec.TilecError) as cm:
            tilec.compile_file("/nonexistent.tile")
        self.assertEqual(cm.exception.status, "TILEC_ERR_IO")
        with self.assertRaises(tilec.TilecError) as cm:
            tilec.compile(SCALE)["nope"]
        self.assertEqual(cm.exception.status, "TILEC_ERR_NOTFOUND")

    def test_signature(self):
        g = tilec.compile_file(GEMM)["gemm"]
        self.assertEqual(repr(g), "kernel gemm(A: f16[M, K], B: f16[K, N], C: f16[M, N])")
        self.assertEqual(g.sizes, ["M", "K", "N"])
        self.assertEqual(g.threads, 128)
        self.assertEqual([p.shape for p in g.params], [("M", "K"), ("K", "N"), ("M", "N")])
        e = tilec.compile_file(ELEMENTWISE)["elementwise"]
        self.assertEqual((e.params[3].name, e.params[3].is_tensor, e.params[3].dtype), ("alpha", False, "f32"))
        self.assertEqual(tilec.compile(FIXED)["rows"].params[0].shape, ("N", 8))

    def test_grid_and_assumes(self):
        g = tilec.compile_file(GEMM)["gemm"]
        self.assertEqual(g.grid(M=200, N=203, K=205), (2, 2, 1))
        s = tilec.compile(SCALE)["scale"]
        self.assertEqual(s.grid(N=128), (2, 1, 1))
        with self.assertRaises(tilec.TilecError) as cm:
            s.grid(N=130)
        self.assertIn("assume at <input>:5:", str(cm.exception))
        with self.assertRaises(tilec.TilecError):
            g.grid(M=1, N=1)


class TestRunCpu(unittest.TestCase):
    def test_gemm(self):
        g = tilec.compile_file(GEMM)["gemm"]
        rng = np.random.default_rng(1)
        for M, K, N in ((70, 40, 130), (128, 64, 128), (1, 1, 1)):
            A, B = small_ints(rng, (M, K)), small_ints(rng, (K, N))
            C = np.full((M, N), 7, np.float16)
            g.run_cpu(A, B, C)
            want = A.astype(np.float32) @ B.astype(np.float32)
            np.testing.assert_array_equal(C.astype(np.float32), want)

    def test_elementwise_scalar_and_keywords(self):
        e = tilec.compile_file(ELEMENTWISE)["elementwise"]
        rng = np.random.default_rng(2)
        A = rng.uniform(-1, 1, (100, 70)).astype(np.float16)
        B = rng.uniform(-1, 1, (100, 70)).astype(np.float16)
        C = np.zeros((100, 70), np.float16)
        e.run_cpu(A, B, C=C, alpha=0.5)
        want = np.maximum(A.astype(np.float32) * 0.5 + B.astype(np.float32), 0).astype(np.float16)
        np.testing.assert_array_equal(C, want)

    def test_dlpack_cpu_tensor(self):
        s = tilec.compile(SCALE)["scale"]
        x = np.arange(64, dtype=np.float32)
        y = np.zeros(64, np.float32)
        s.run_cpu(DLPackOnly(x), DLPackOnly(y), 2.0)
        np.testing.assert_array_equal(y, x * 2 + 1)

    def test_fixed_extent(self):
        r = tilec.compile(FIXED)["rows"]
        x = np.ones((40, 8), np.float32)
        r.run_cpu(x)
        np.testing.assert_array_equal(x, np.full((40, 8), 2, np.float32))
        with self.assertRaises(tilec.TilecError) as cm:
            r.run_cpu(np.ones((40, 9), np.float32))
        self.assertIn("extent 9 in dimension 1", str(cm.exception))

    def test_checks(self):
        g = tilec.compile_file(GEMM)["gemm"]
        A = np.zeros((64, 32), np.float16)
        B = np.zeros((32, 48), np.float16)
        C = np.zeros((64, 48), np.float16)
        cases = [
            ((A.astype(np.float32), B, C), "dtype <f4, the kernel takes f16"),
            ((A, B, np.zeros((64, 49), np.float16)), "N = 48 from B.shape[1], but C.shape[1] is 49"),
            ((A, B, np.zeros((64, 48, 1), np.float16)), "has 3 dimensions"),
            ((A, np.zeros((48, 32), np.float16).T, C), "dense row-major"),
            ((A, B), "no value for C"),
            ((A, B, C, C), "takes 3 arguments"),
            ((A, B, 3.0), "is not a tensor"),
        ]
        for args, msg in cases:
            with self.assertRaises(tilec.TilecError) as cm:
                g.run_cpu(*args)
            self.assertIn(msg, str(cm.exception))
            self.assertEqual(cm.exception.status, "TILEC_ERR_ARG")
        ro = C.copy()
        ro.flags.writeable = False
        with self.assertRaisesRegex(tilec.TilecError, "read-only"):
            g.run_cpu(A, B, ro)
        with self.assertRaisesRegex(tilec.TilecError, "no parameter or size 'D'"):
            g.run_cpu(A, B, C, D=1)
        with self.assertRaisesRegex(tilec.TilecError, "assume"):
            tilec.compile(SCALE)["scale"].run_cpu(np.zeros(6, np.float32), np.zeros(6, np.float32), 1.0)

    def test_hip_target_on_cpu(self):
        g = tilec.compile_file(GEMM, target="hip", arch="gfx90a")["gemm"]
        rng = np.random.default_rng(3)
        A, B = small_ints(rng, (33, 40)), small_ints(rng, (40, 65))
        C = np.zeros((33, 65), np.float16)
        g.run_cpu(A, B, C)
        np.testing.assert_array_equal(C.astype(np.float32), A.astype(np.float32) @ B.astype(np.float32))


class TestStrided(unittest.TestCase):
    """Strided tensors: stride symbols from the arrays' strides, views of one buffer."""

    def test_signature(self):
        h = tilec.compile_file(HEAD)["head"]
        self.assertEqual(h.sizes, ["S", "sq", "so", "ldt"])
        self.assertEqual(h.params[0].strides, ("sq", 1))
        self.assertEqual(h.params[2].strides, (1, "ldt"))
        self.assertEqual(repr(h.params[2]), "T: f32[64, S] strides(1, ldt)")
        self.assertIsNone(tilec.compile_file(GEMM)["gemm"].params[0].strides)

    def run_heads(self, offset):
        # one head at a time of a [B, S, H, 64] tensor, in place; T is column-major (strides
        # (1, ldt)): a [S, ldt] row-major buffer seen transposed. offset shifts the buffer's
        # start by that many elements (an unaligned view: the element-by-element body)
        h = tilec.compile_file(HEAD)["head"]
        Bn, S, H, D = 2, 37, 3, 64
        rng = np.random.default_rng(5)
        n = Bn * S * H * D
        X = (rng.integers(-8, 8, n + offset).astype(np.float32) / 4)[offset:].reshape(Bn, S, H, D)
        O = np.zeros(n + offset, np.float32)[offset:].reshape(Bn, S, H, D)
        for b in range(Bn):
            for hh in range(H):
                Tbuf = np.full((S, 70), -1.0, np.float32)
                T = Tbuf[:, :D].T
                views, _, sizes = h._bind((X[b, :, hh, :], O[b, :, hh, :], T, 0.5), {}, "cpu")
                self.assertEqual(sizes, [S, H * D, H * D, 70])
                h.run_cpu(X[b, :, hh, :], O[b, :, hh, :], T, 0.5)
                np.testing.assert_array_equal(T, X[b, :, hh, :].T)
                np.testing.assert_array_equal(Tbuf[:, D:], np.full((S, 70 - D), -1.0, np.float32))
        np.testing.assert_array_equal(O, X * 0.5)

    def test_heads_in_place(self):
        self.run_heads(0)

    def test_heads_unaligned(self):
        self.run_heads(1)

    def test_checks(self):
        h = tilec.compile_file(HEAD)["head"]
        X = np.zeros((37, 3, 64), np.float32)
        T = np.zeros((37, 70), np.float32)[:, :64].T
        with self.assertRaisesRegex(tilec.TilecError, "tensor T has stride 37 in dimension 0, the kernel "
                                    "takes T: f32\\[64, S\\] strides\\(1, ldt\\)"):
            h.run_cpu(X[:, 0, :], X[:, 1, :], np.zeros((64, 37), np.float32), 1.0)
        with self.assertRaisesRegex(tilec.TilecError, "ldt = 3 given, but T.strides\\[1\\] is 70"):
            h.run_cpu(X[:, 0, :], X[:, 1, :], T, 1.0, ldt=3)
        C = tilec.compile("kernel c(A: f32[M, 8] strides(16, 1)) grid(1) threads(32) {\n"
                          "  for i, j in parallel(4, 8) { A[i, j] = 1.0; }\n}\n")["c"]
        with self.assertRaisesRegex(tilec.TilecError, "tensor A has stride 8 in dimension 0, the kernel "
                                    "takes A: f32\\[M, 8\\] strides\\(16, 1\\)"):
            C.run_cpu(np.zeros((4, 8), np.float32))
        # sizes and strides are the kernel's int parameters
        with self.assertRaisesRegex(tilec.TilecError, "ldt = 4294967296 \\(from T.strides\\[1\\]\\) does "
                                    "not fit the kernel's int"):
            q = CudaFake((37, 64), "<f4", (768, 4))
            h._bind((q, q, CudaFake((64, 37), "<f4", (4, 4 << 32)), 1.0), {}, "cuda")
        A = np.zeros((4, 16), np.float32)
        C.run_cpu(A[:, :8])
        np.testing.assert_array_equal(A, np.hstack([np.ones((4, 8)), np.zeros((4, 8))]).astype(np.float32))


class TestGpuArguments(unittest.TestCase):
    """The checks of a GPU launch run before anything touches the GPU."""

    def test_cuda_array_interface_checks(self):
        g = tilec.compile_file(GEMM)["gemm"]
        ok = lambda s: CudaFake(s)  # noqa: E731
        with self.assertRaisesRegex(tilec.TilecError, "K = 32 from A.shape\\[1\\], but B.shape\\[0\\] is 33"):
            g.launch(ok((64, 32)), ok((33, 48)), ok((64, 48)))
        with self.assertRaisesRegex(tilec.TilecError, "dtype <f4"):
            g.launch(ok((64, 32)), CudaFake((32, 48), "<f4"), ok((64, 48)))
        with self.assertRaisesRegex(tilec.TilecError, "dense row-major"):
            g.launch(ok((64, 32)), CudaFake((32, 48), "<f2", (2, 64)), ok((64, 48)))
        # byte strides of a dense tensor are accepted by the checks
        views, _, sizes = g._bind((ok((64, 32)), CudaFake((32, 48), "<f2", (96, 2)), ok((64, 48))), {},
                                  "cuda")
        self.assertEqual(sizes, [64, 32, 48])
        self.assertEqual(views[1].strides, (48, 1))

    def test_strided_views(self):
        # CUDA views (byte strides, as PyTorch gives them): one head of a [B, S, H, 64] f32
        # tensor for Q and O, a transposed [S, 70] buffer for T; the stride symbols come
        # from the views, the pointers as given
        h = tilec.compile_file(HEAD)["head"]
        q = CudaFake((37, 64), "<f4", (3 * 64 * 4, 4))
        t = CudaFake((64, 37), "<f4", (4, 70 * 4))
        views, _, sizes = h._bind((q, q, t, 0.5), {}, "cuda")
        self.assertEqual(sizes, [37, 192, 192, 70])
        self.assertEqual(views[2].strides, (1, 70))
        with self.assertRaisesRegex(tilec.TilecError, "sq = 192 from Q.strides\\[0\\], but the stride of O "
                                    "in dimension 0 is 64"):
            g = tilec.compile("kernel g(Q: f32[S, 64] strides(sq, 1), O: f32[S, 64] strides(sq, 1)) "
                              "grid(1) threads(32) {\n  for i, j in parallel(1, 64) { O[i, j] = Q[i, j]; }\n}\n")["g"]
            g._bind((q, CudaFake((37, 64), "<f4")), {}, "cuda")

    def test_host_memory_refused(self):
        g = tilec.compile_file(GEMM)["gemm"]
        A = np.zeros((64, 32), np.float16)
        with self.assertRaisesRegex(tilec.TilecError, "on cpu, the launch needs cuda memory"):
            g.launch(DLPackOnly(A), CudaFake((32, 48)), CudaFake((64, 48)))
        with self.assertRaisesRegex(tilec.TilecError, "not a tensor"):
            g.launch([[0.0] * 32] * 64, CudaFake((32, 48)), CudaFake((64, 48)))

    def test_jit_caches(self):
        d = os.path.join(ROOT, "build", "python-test-cache")
        j = tilec.Jit(cache_dir=d)
        self.assertEqual(j.cache_dir, d)
        self.assertEqual(j.stats()["compiles"], 0)
        self.assertIsNone(tilec.Jit(no_disk_cache=True).cache_dir)


if __name__ == "__main__":
    unittest.main()

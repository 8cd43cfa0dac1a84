"""GPU check of the tilec Python package, for a machine with an NVIDIA GPU (not part of
make test: there is no GPU there). Launches samples/gemm.tile and samples/elementwise.tile
through Kernel.launch: with PyTorch CUDA tensors when torch is installed, and always with
a minimal device array of this script (tilec_dev_alloc memory behind
__cuda_array_interface__), so it needs neither torch nor NumPy. Checks every element
against a reference on the host, then the JIT's caches (a second Jit with the same cache
directory loads from disk, compiling nothing).

    PYTHONPATH=python TILEC_LIBRARY=build/libtilec.so python3 python/tests/gpu_check.py
Exit 0: passed; 1: a failure; 77: no GPU (no libcuda or no device).
"""
import ctypes
import os
import random
import struct
import sys
import tempfile

import tilec

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
lib = tilec._lib
for n in ("tilec_dev_alloc", "tilec_dev_free", "tilec_dev_upload", "tilec_dev_download", "tilec_dev_sync"):
    getattr(lib, n).restype = ctypes.c_int
lib.tilec_dev_alloc.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
lib.tilec_dev_free.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
lib.tilec_dev_upload.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
lib.tilec_dev_download.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
lib.tilec_dev_sync.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]


def check(st, err):
    if st != 0:
        raise tilec.TilecError(st, tilec._take(err))


class DeviceF16:
    """f16 device memory with __cuda_array_interface__ (row-major, no strides)."""

    def __init__(self, jit, shape, values):
        self.jit, self.shape = jit, tuple(shape)
        self.n = 1
        for s in shape:
            self.n *= s
        self.ptr, err = ctypes.c_void_p(), ctypes.c_void_p()
        check(lib.tilec_dev_alloc(jit._j, ctypes.byref(self.ptr), 2 * self.n, ctypes.byref(err)), err)
        data = struct.pack("<%de" % self.n, *values)
        check(lib.tilec_dev_upload(jit._j, self.ptr, data, len(data), ctypes.byref(err)), err)
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": "<f2",
                                         "data": (self.ptr.value, False), "version": 3}

    def host(self):
        buf, err = ctypes.create_string_buffer(2 * self.n), ctypes.c_void_p()
        check(lib.tilec_dev_sync(self.jit._j, ctypes.byref(err)), err)
        check(lib.tilec_dev_download(self.jit._j, buf, self.ptr, 2 * self.n, ctypes.byref(err)), err)
        return struct.unpack("<%de" % self.n, buf.raw)

    def free(self):
        err = ctypes.c_void_p()
        lib.tilec_dev_free(self.jit._j, self.ptr, ctypes.byref(err))


def main():
    cache = tempfile.mkdtemp(prefix="tilec-gpu-check-")
    jit = tilec.Jit(cache_dir=cache)
    err = ctypes.c_void_p()
    probe = ctypes.c_void_p()
    if lib.tilec_dev_alloc(jit._j, ctypes.byref(probe), 16, ctypes.byref(err)) != 0:
        print("gpu_check: no GPU:", tilec._take(err))
        return 77
    lib.tilec_dev_free(jit._j, probe, ctypes.byref(err))
    failures = 0
    rnd = random.Random(1)
    gemm = tilec.compile_file(os.path.join(ROOT, "samples", "gemm.tile"))["gemm"]
    for M, K, N in ((256, 128, 384), (200, 205, 203)):
        a = [float(rnd.randint(-2, 2)) for _ in range(M * K)]
        b = [float(rnd.randint(-2, 2)) for _ in range(K * N)]
        A, B = DeviceF16(jit, (M, K), a), DeviceF16(jit, (K, N), b)
        C = DeviceF16(jit, (M, N), [float("nan")] * (M * N))
        gemm.launch(A, B, C, jit=jit)
        got = C.host()
        bad = 0
        for i in range(M):
            row = a[i * K:(i + 1) * K]
            for j in range(N):
                want = sum(row[l] * b[l * N + j] for l in range(K))
                if got[i * N + j] != want:
                    bad += 1
        print("gemm M=%d K=%d N=%d (device array): %s" % (M, K, N, "ok" if not bad else "%d wrong" % bad))
        failures += bad > 0
        for t in (A, B, C):
            t.free()
    stats = jit.stats()
    print("jit stats:", stats)
    jit2 = tilec.Jit(cache_dir=cache)
    prog2 = tilec.Program(open(os.path.join(ROOT, "samples", "gemm.tile"), "rb").read())
    A, B, C = DeviceF16(jit2, (128, 32), [1.0] * 4096), DeviceF16(jit2, (32, 128), [1.0] * 4096), \
        DeviceF16(jit2, (128, 128), [0.0] * 16384)
    prog2["gemm"].launch(A, B, C, jit=jit2)
    ok = all(v == 32.0 for v in C.host())
    s2 = jit2.stats()
    print("second jit, same cache dir:", s2, "results", "ok" if ok else "WRONG")
    failures += not ok or s2["compiles"] != 0 or s2["disk_hits"] < 1
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        A = torch.randint(-2, 3, (256, 64), device="cuda").half()
        B = torch.randint(-2, 3, (64, 128), device="cuda").half()
        C = torch.empty(256, 128, device="cuda", dtype=torch.half)
        gemm.launch(A, B, C, jit=jit)
        torch.cuda.synchronize()
        ok = torch.equal(C.float(), A.float() @ B.float())
        print("gemm with torch tensors:", "ok" if ok else "WRONG")
        failures += not ok
    else:
        print("torch with CUDA not available: the torch case is skipped")
    print("gpu_check:", "passed" if not failures else "%d FAILED" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

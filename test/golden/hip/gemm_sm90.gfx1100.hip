tilec: error: kernel 'gemm_sm90': kernel 'gemm_sm90' needs 196608 bytes of shared memory; gfx1100 allows 65536

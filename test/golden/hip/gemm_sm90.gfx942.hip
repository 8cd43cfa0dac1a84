tilec: error: kernel 'gemm_sm90': kernel 'gemm_sm90' needs 196608 bytes of shared memory; gfx942 allows 65536

samples/flash_fwd.tile:63:9: error: layout inference: gemm: operand A 'p' in registers is not lowered for MFMA yet (only mma.sync reads A from registers); stage it through shared memory

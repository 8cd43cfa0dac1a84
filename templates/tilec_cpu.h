// tilec_cpu.h: the CPU stand-in for tilec_cuda.h (cpu/cpuexec.h). Being written.
#error "tilec_cpu.h is not written yet"

// cpu_emul.cu: the unit kernels of test/cpu_exec_kernels.cu on an NVIDIA GPU (sm_90a), checked
// against the same expected tables (test/cpu_exec_ref.h) that test/check_cpu_exec.c holds the CPU
// emulation (templates/tilec_cpu.h) to. Passing here and there means the emulation computes what
// the hardware computes for these instructions. Run by test/gpu/cpu_emul.sh.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../cpu_exec_kernels.cu"
#include "../cpu_exec_ref.h"

static int fails;

#define CK(x)                                                                                    \
	do {                                                                                     \
		cudaError_t e_ = (x);                                                            \
		if (e_ != cudaSuccess) {                                                         \
			printf("FAIL cuda %s: %s\n", #x, cudaGetErrorString(e_));               \
			exit(1);                                                                 \
		}                                                                                \
	} while (0)

static unsigned rng = 777;
static unsigned rnd() { return (rng = rng * 1103515245u + 12345u) >> 8; }

template <class T> static T *dev(const std::vector<T> &h)
{
	T *d;
	CK(cudaMalloc(&d, h.size() * sizeof(T) + 16));
	CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
	return d;
}

template <class T> static void back(std::vector<T> &h, const T *d)
{
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h.data(), d, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

static void report(const char *name, int bad, const char *first)
{
	if (bad) {
		printf("FAIL %s: %d wrong; first: %s\n", name, bad, first);
		fails++;
	} else
		printf("ok   %s\n", name);
}

static void t_shfl()
{
	std::vector<unsigned> out(64 * 16);
	std::vector<double> od(64);
	unsigned *d_o = dev(out);
	double *d_d = dev(od);
	int bad = 0;
	char first[256] = "";

	k_shfl<<<1, 64>>>(d_o, d_d);
	back(out, d_o);
	back(od, d_d);
	for (int t = 0; t < 64; t++) {
		int l = t % 32, w = t - l;
		unsigned e[16];
#define V(lane) ((unsigned)(w + (lane)) * 1000u + 7u)
		e[0] = V(ref_shfl_xor(l, 1, 32));
		e[1] = V(ref_shfl_xor(l, 16, 32));
		e[2] = V(ref_shfl_xor(l, 5, 8));
		e[3] = V(ref_shfl_xor(l, 4, 4));
		e[4] = V(ref_shfl_idx(l, 3, 32));
		e[5] = V(ref_shfl_idx(l, l + 5, 32));
		e[6] = V(ref_shfl_idx(l, l ^ 1, 8));
		e[7] = V(ref_shfl_idx(l, 9, 8));
		e[8] = V(ref_shfl_up(l, 3, 32));
		e[9] = V(ref_shfl_up(l, 2, 8));
		e[10] = V(ref_shfl_down(l, 3, 32));
		e[11] = V(ref_shfl_down(l, 5, 16));
		e[12] = ref_fbits((float)V(ref_shfl_down(l, 1, 32)));
		e[13] = V(ref_shfl_idx(l, 31 - l, 32));
		e[14] = ref_fbits((float)(l / 8 * 8 * 8 + 28));
		e[15] = ref_fbits(31.0f);
		for (int i = 0; i < 16; i++)
			if (out[t * 16 + i] != e[i] && !bad++)
				snprintf(first, sizeof first, "thread %d result %d: %u, expected %u", t, i, out[t * 16 + i], e[i]);
		if (od[t] != (double)((w + ref_shfl_xor(l, 3, 32)) * 1000u + 7u) + 0.5 && !bad++)
			snprintf(first, sizeof first, "thread %d double", t);
#undef V
	}
	report("shuffles", bad, first);
}

static void t_ldmatrix(int trans)
{
	std::vector<unsigned short> src(256);
	std::vector<unsigned> out(128);
	int bad = 0;
	char first[256] = "";

	for (auto &v : src)
		v = (unsigned short)rnd();
	unsigned short *d_s = dev(src);
	unsigned *d_o = dev(out);
	k_ldmatrix<<<1, 32, 512>>>(d_s, d_o, trans);
	back(out, d_o);
	for (int m = 0; m < 4; m++)
		for (int r = 0; r < 8; r++)
			for (int c = 0; c < 8; c++) {
				int lane, reg, half, slot = ((m * 8 + r) * 5) % 32;
				unsigned short want = src[slot * 8 + c], got;

				ref_ldmatrix_dest(m, r, c, trans, &lane, &reg, &half);
				got = (unsigned short)(out[lane * 4 + reg] >> (16 * half));
				if (got != want && !bad++)
					snprintf(first, sizeof first, "matrix %d (%d,%d): 0x%04x, expected 0x%04x", m, r, c, got, want);
			}
	report(trans ? "ldmatrix.x4.trans" : "ldmatrix.x4", bad, first);
}

static void t_mma(int bf)
{
	std::vector<unsigned> ar(128, 0), br(64, 0);
	std::vector<float> cr(128), dr(128);
	float A[16][16], B[16][8], C[16][8];
	int bad = 0;
	char first[256] = "";

	for (int r = 0; r < 16; r++)
		for (int k = 0; k < 16; k++) {
			int lane, reg, half;
			float v = (float)((int)(rnd() % 17) - 8) / 4;

			A[r][k] = v;
			ref_mma_a_dest(r, k, &lane, &reg, &half);
			ar[lane * 4 + reg] |= (unsigned)(bf ? ref_f2bf(v) : ref_f2h(v)) << (16 * half);
		}
	for (int k = 0; k < 16; k++)
		for (int n = 0; n < 8; n++) {
			int lane, reg, half;
			float v = (float)((int)(rnd() % 13) - 6) / 2;

			B[k][n] = v;
			ref_mma_b_dest(k, n, &lane, &reg, &half);
			br[lane * 2 + reg] |= (unsigned)(bf ? ref_f2bf(v) : ref_f2h(v)) << (16 * half);
		}
	for (int r = 0; r < 16; r++)
		for (int n = 0; n < 8; n++) {
			int lane, reg;

			C[r][n] = (float)((int)(rnd() % 101) - 50);
			ref_mma_c_dest(r, n, &lane, &reg);
			cr[lane * 4 + reg] = C[r][n];
		}
	unsigned *d_a = dev(ar), *d_b = dev(br);
	float *d_c = dev(cr), *d_d = dev(dr);
	k_mma<<<1, 32>>>(d_a, d_b, d_c, d_d, bf);
	back(dr, d_d);
	for (int r = 0; r < 16; r++)
		for (int n = 0; n < 8; n++) {
			int lane, reg;
			float want = C[r][n];

			for (int k = 0; k < 16; k++)
				want += A[r][k] * B[k][n];
			ref_mma_c_dest(r, n, &lane, &reg);
			if (dr[lane * 4 + reg] != want && !bad++)
				snprintf(first, sizeof first, "D(%d,%d) = %g, expected %g", r, n, dr[lane * 4 + reg], want);
		}
	report(bf ? "mma.m16n8k16.bf16" : "mma.m16n8k16.f16", bad, first);
}

static void t_cvt()
{
	const int N = 1 << 20;
	static const uint32_t edge[] = {
		0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0x477fe000,
		0x477fefff, 0x477ff000, 0x477ff001, 0x47800000, 0xc77ff000, 0x38800000, 0x387fffff, 0x387fe000,
		0x38000000, 0x33800000, 0x33000000, 0x33000001, 0x32ffffff, 0x33c00000, 0x34200000, 0x3f801000,
		0x3f803000, 0x3f801001, 0x3f800fff, 0x7f7fffff, 0x7f7f8000, 0x7f7f7fff, 0x00000001, 0x00008000,
		0x0000c000, 0x00018000, 0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, 0xbf808000, 0x007fffff,
		0x00800000, 0x7fbfffff, 0xff800001};
	std::vector<float> in(N);
	std::vector<unsigned short> h(N), b(N);
	std::vector<unsigned> p(N), q(N), hf(65536);
	int bad[4] = {0, 0, 0, 0};
	char first[4][256] = {"", "", "", ""};

	for (int i = 0; i < N; i++) {
		uint32_t u = i < (int)(sizeof edge / sizeof edge[0]) ? edge[i]
			     : i % 3 ? (rnd() << 8 ^ rnd()) : 0x33000000u + (rnd() % 0x15000000u);
		in[i] = ref_bitsf(u);
	}
	float *d_in = dev(in);
	unsigned short *d_h = dev(h), *d_b = dev(b);
	unsigned *d_p = dev(p), *d_q = dev(q), *d_hf = dev(hf);
	k_cvt<<<64, 256>>>(d_in, N, d_h, d_b, d_p, d_q, d_hf);
	back(h, d_h);
	back(b, d_b);
	back(p, d_p);
	back(q, d_q);
	back(hf, d_hf);
	for (int i = 0; i < N; i++) {
		if (h[i] != ref_f2h(in[i]) && !bad[0]++)
			snprintf(first[0], 256, "f2h(0x%08x) = 0x%04x, expected 0x%04x", ref_fbits(in[i]), h[i], ref_f2h(in[i]));
		if (b[i] != ref_f2bf(in[i]) && !bad[1]++)
			snprintf(first[1], 256, "f2bf(0x%08x) = 0x%04x, expected 0x%04x", ref_fbits(in[i]), b[i], ref_f2bf(in[i]));
		if ((p[i] != ((unsigned)ref_f2h(in[i]) | (unsigned)ref_f2h(in[N - 1 - i]) << 16) ||
		     q[i] != ((unsigned)ref_f2bf(in[i]) | (unsigned)ref_f2bf(in[N - 1 - i]) << 16)) &&
		    !bad[2]++)
			snprintf(first[2], 256, "pack %d: 0x%08x 0x%08x", i, p[i], q[i]);
	}
	for (int i = 0; i < 65536; i++)
		if (hf[i] != ref_fbits(ref_h2f((uint16_t)i)) && !bad[3]++)
			snprintf(first[3], 256, "h2f(0x%04x) = 0x%08x, expected 0x%08x", i, hf[i], ref_fbits(ref_h2f((uint16_t)i)));
	report("cvt.rn.f16.f32 (1M values)", bad[0], first[0]);
	report("cvt.rn.bf16.f32 (1M values)", bad[1], first[1]);
	report("cvt.rn.{f16,bf16}x2.f32", bad[2], first[2]);
	report("cvt.f32.f16 (all 65536)", bad[3], first[3]);
	// what the hardware gives for a few NaN inputs (printed, for the record)
	printf("info cvt: f2h(0x7fc00000)=0x%04x f2h(0xffc00001)=0x%04x f2h(0x7f800001)=0x%04x f2bf(0xffc00001)=0x%04x "
	       "h2f(0x7e01)=0x%08x h2f(0xfc01)=0x%08x\n",
	       h[4], h[5], h[6], b[5], hf[0x7e01], hf[0xfc01]);
}

typedef void (*WK)(const unsigned char *, int, const float *, float *, const int *);
static const WK wk[] = {k_wgmma_n64_t1, k_wgmma_n256_t1, k_wgmma_n32_t1,    k_wgmma_n8_t1,    k_wgmma_n64_t0,
			k_wgmma_n128_t0, k_wgmma_n256_t0, k_wgmma_n64_t1_bf, k_wgmma_n96_t0_bf};

static void t_wgmma(const RefWgCase *c)
{
	int kdim = 16 * c->nk, nr = c->n / 2, bad = 0;
	std::vector<unsigned short> img(65536 / 2, 0x7e00);
	std::vector<unsigned char> set(65536, 0);
	std::vector<float> A(64 * kdim), B((size_t)c->n * kdim), cin(128 * nr), out(128 * nr);
	std::vector<int> p = {c->offa, c->lboa, c->sboa, c->modea, c->adva, c->offb,
			      c->lbob, c->sbob, c->nk,    c->advb,  c->modeb};
	char first[256] = "";

	for (auto &v : A)
		v = (float)((int)(rnd() % 9) - 4);
	for (auto &v : B)
		v = (float)((int)(rnd() % 7) - 3) / 2;
	for (auto &v : cin)
		v = (float)((int)(rnd() % 64) - 32);
	for (int kk = 0; kk < c->nk; kk++)
		for (int op = 0; op < 2; op++) {
			int rows = op ? c->n : 64;
			unsigned long start = (unsigned long)(op ? c->offb + kk * c->advb : c->offa + kk * c->adva);

			for (int mn = 0; mn < rows; mn++)
				for (int k = 0; k < 16; k++) {
					unsigned long a = op ? ref_canonical_addr(start, c->tb, c->modeb, c->lbob, c->sbob, mn, k)
							     : ref_canonical_addr(start, 0, c->modea, c->lboa, c->sboa, mn, k);
					float v = op ? B[(size_t)mn * kdim + 16 * kk + k] : A[(size_t)mn * kdim + 16 * kk + k];
					uint16_t hv = c->bf ? ref_f2bf(v) : ref_f2h(v);

					if (a + 2 > (unsigned long)c->imgbytes || (set[a] && img[a / 2] != hv)) {
						printf("FAIL %s: bad placement at %lu\n", c->name, a);
						fails++;
						return;
					}
					set[a] = 1;
					img[a / 2] = hv;
				}
		}
	unsigned char *d_img;
	CK(cudaMalloc(&d_img, c->imgbytes));
	CK(cudaMemcpy(d_img, img.data(), c->imgbytes, cudaMemcpyHostToDevice));
	float *d_c = dev(cin), *d_o = dev(out);
	int *d_p = dev(p);
	CK(cudaFuncSetAttribute(wk[c->kernel], cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
	wk[c->kernel]<<<1, 128, 65536>>>(d_img, c->imgbytes, d_c, d_o, d_p);
	CK(cudaGetLastError());
	back(out, d_o);
	for (int t = 0; t < 128; t++)
		for (int i = 0; i < nr; i++) {
			int row, col;
			float want;

			ref_wgmma_d_coord(t, i, &row, &col);
			want = cin[t * nr + i];
			for (int k = 0; k < kdim; k++)
				want += A[row * kdim + k] * B[col * kdim + k];
			if (out[t * nr + i] != want && !bad++)
				snprintf(first, sizeof first, "thread %d reg %d = D(%d,%d) = %g, expected %g", t, i, row, col,
					 out[t * nr + i], want);
		}
	report(c->name, bad, first);
}

int main()
{
	cudaDeviceProp prop;

	CK(cudaGetDeviceProperties(&prop, 0));
	printf("info device %s sm_%d%d\n", prop.name, prop.major, prop.minor);
	t_shfl();
	t_ldmatrix(0);
	t_ldmatrix(1);
	t_mma(0);
	t_mma(1);
	t_cvt();
	for (size_t i = 0; i < sizeof ref_wg_cases / sizeof ref_wg_cases[0]; i++)
		t_wgmma(&ref_wg_cases[i]);
	printf("%s: %d failed\n", fails ? "FAIL" : "PASS", fails);
	return fails != 0;
}

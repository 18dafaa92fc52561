// PolyBench gemm's reference and slow control natively, from the harness's own two translation
// units (the candidate TUs the probe harness compiles: gemm_modes.sh writes and builds them), each
// behind its own name. One process = one address layout; per call, as the harness's observer does,
// the arrays are restored from pristine copies (untimed), then one variant is timed by the thread's
// CPU clock, the variants round-robin in a fresh order:
//   ref     the reference TU's kernel_gemm
//   slow    the slow TU's kernel_gemm (saves, kernel, restores, kernel: one TU, the kernel inlined twice)
//   ref2    the reference TU's kernel_gemm called twice (the same work twice, the reference's code)
//   copies  the slow control's saves and restores alone (std::vector copies, as in its TU)
// Prints the medians per variant and the ratios; run it in several processes to see the layouts.
// A second argument runs only those variants (e.g. "0": the reference alone, "1": the slow control
// alone, each in a process of its own as in the harness), printing the median per call.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>
#define NI 200
#define NJ 220
#define NK 240
typedef double row_c[NJ];
typedef double row_a[NK];
void ref_gemm(int, int, int, double, double, row_c*, row_a*, row_c*);
void slow_gemm(int, int, int, double, double, row_c*, row_a*, row_c*);

static double now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
  const int calls = argc > 1 ? atoi(argv[1]) : 60;
  const char* only = argc > 2 ? argv[2] : "0123";
  // PolyBench's own allocation (polybench_alloc_data: posix_memalign, 4096) and init_array
  row_c *C, *B; row_a *A;
  if (posix_memalign((void**)&C, 4096, sizeof(double) * NI * NJ) || posix_memalign((void**)&A, 4096, sizeof(double) * NI * NK)
      || posix_memalign((void**)&B, 4096, sizeof(double) * NK * NJ)) return 1;
  double alpha = 1.5, beta = 1.2;
  for (int i = 0; i < NI; i++) for (int j = 0; j < NJ; j++) C[i][j] = (double)((i * j + 1) % NI) / NI;
  for (int i = 0; i < NI; i++) for (int j = 0; j < NK; j++) A[i][j] = (double)(i * (j + 1) % NK) / NK;
  for (int i = 0; i < NK; i++) for (int j = 0; j < NJ; j++) B[i][j] = (double)(i * (j + 2) % NJ) / NJ;
  double *c = &C[0][0], *a = &A[0][0], *b = &B[0][0];
  const size_t nc = (size_t)NI * NJ, na = (size_t)NI * NK, nb = (size_t)NK * NJ;
  std::vector<double> pc(c, c + nc), pa(a, a + na), pb(b, b + nb);
  std::vector<std::vector<double>> t(4);
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < calls; ++i) {
    int order[4] = {0, 1, 2, 3};
    std::shuffle(order, order + 4, rng);
    for (int v : order) {
      if (!strchr(only, '0' + v)) continue;
      std::copy(pc.begin(), pc.end(), c); std::copy(pa.begin(), pa.end(), a); std::copy(pb.begin(), pb.end(), b);
      double t0 = now();
      if (v == 0) ref_gemm(NI, NJ, NK, alpha, beta, C, A, B);
      else if (v == 1) slow_gemm(NI, NJ, NK, alpha, beta, C, A, B);
      else if (v == 2) { ref_gemm(NI, NJ, NK, alpha, beta, C, A, B); ref_gemm(NI, NJ, NK, alpha, beta, C, A, B); }
      else {
        std::vector<double> sc(c, c + nc), sa(a, a + na), sb(b, b + nb);
        asm volatile("" : : : "memory");
        std::copy(sc.begin(), sc.end(), c); std::copy(sa.begin(), sa.end(), a); std::copy(sb.begin(), sb.end(), b);
      }
      asm volatile("" : : : "memory");
      t[v].push_back(now() - t0);
    }
  }
  double m[4];
  for (int v = 0; v < 4; ++v) {
    if (t[v].empty()) continue;
    std::sort(t[v].begin(), t[v].end()); m[v] = t[v][calls / 2];
    if (argc > 2) printf("variant %d: %.3f ms\n", v, 1e3 * m[v]);
  }
  if (argc > 2) return 0;
  printf("ref %.3f ms  slow %.3f  ref2 %.3f  copies %.3f  | ref/slow %.3f  ref/ref2 %.3f  copies/ref %.3f  "
         "(slow-ref2-copies)/ref %+.3f  stack %p\n", 1e3 * m[0], 1e3 * m[1], 1e3 * m[2], 1e3 * m[3], m[0] / m[1],
         m[0] / m[2], m[3] / m[0], (m[1] - m[2] - m[3]) / m[0], (void*)&calls);
  return 0;
}

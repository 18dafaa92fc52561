// PolyBench gemm (MEDIUM, the harness's timed dataset), part by part, natively: where does the slow
// control's cost beyond 2x the reference come from? Each call, as the harness's observer does,
// first restores the arrays from pristine copies (untimed), then times one variant with the
// thread's CPU clock:
//   ref     the kernel once
//   slow    the harness's slow control: save C, A, B into fresh std::vectors, kernel, restore, kernel
//   twice   the kernel twice, no save or restore
//   copies  the saves and the restores alone
// Variants go round-robin in a fresh order per round; per round the medians of each variant's
// calls; printed: per round and over the rounds, the medians' ratios.
//   g++ -O3 -std=c++17 -DMEDIUM_DATASET -I$PB/utilities -I$PB/linear-algebra/blas/gemm \
//       gemm_parts.cpp $PB/utilities/polybench.c -o gemm_parts -lm && ./gemm_parts 21 40
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>
#define main gemm_main
#include "gemm.c"
#undef main

static double now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 21, calls = argc > 2 ? atoi(argv[2]) : 40;
  const int ni = NI, nj = NJ, nk = NK;
  DATA_TYPE alpha, beta;
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, NI, NJ, ni, nj);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, NI, NK, ni, nk);
  POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, NK, NJ, nk, nj);
  init_array(ni, nj, nk, &alpha, &beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
  double *c = (double*)POLYBENCH_ARRAY(C), *a = (double*)POLYBENCH_ARRAY(A), *b = (double*)POLYBENCH_ARRAY(B);
  const size_t nc = (size_t)NI * NJ, na = (size_t)NI * NK, nb = (size_t)NK * NJ;
  std::vector<double> pc(c, c + nc), pa(a, a + na), pb(b, b + nb);
  auto kernel = [&] { kernel_gemm(ni, nj, nk, alpha, beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B)); };
  auto saves_restores = [&](bool run_between) {
    std::vector<double> sc(c, c + nc), sa(a, a + na), sb(b, b + nb);
    if (run_between) kernel();
    asm volatile("" : : : "memory");
    std::copy(sc.begin(), sc.end(), c); std::copy(sa.begin(), sa.end(), a); std::copy(sb.begin(), sb.end(), b);
  };
  const char* names[] = {"ref", "slow", "twice", "copies"};
  std::mt19937 rng(12345);
  std::vector<std::vector<double>> med(4);
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::vector<double>> t(4);
    for (int i = 0; i < calls; ++i) {
      int order[4] = {0, 1, 2, 3};
      std::shuffle(order, order + 4, rng);
      for (int v : order) {
        std::copy(pc.begin(), pc.end(), c); std::copy(pa.begin(), pa.end(), a); std::copy(pb.begin(), pb.end(), b);
        double t0 = now();
        if (v == 0) kernel();
        else if (v == 1) { saves_restores(true); kernel(); }
        else if (v == 2) { kernel(); kernel(); }
        else saves_restores(false);
        asm volatile("" : : : "memory");
        t[v].push_back(now() - t0);
      }
    }
    for (int v = 0; v < 4; ++v) {
      std::nth_element(t[v].begin(), t[v].begin() + calls / 2, t[v].end());
      med[v].push_back(t[v][calls / 2]);
    }
    printf("round %2d  ref %.3f ms  ref/slow %.3f  ref/twice %.3f  copies/ref %.3f\n", r, 1e3 * med[0][r],
           med[0][r] / med[1][r], med[0][r] / med[2][r], med[3][r] / med[0][r]);
  }
  auto median = [](std::vector<double> x) { std::sort(x.begin(), x.end()); return x[x.size() / 2]; };
  std::vector<double> rs, rt, cr, ex;
  for (int r = 0; r < rounds; ++r) {
    rs.push_back(med[0][r] / med[1][r]); rt.push_back(med[0][r] / med[2][r]); cr.push_back(med[3][r] / med[0][r]);
    ex.push_back((med[1][r] - med[2][r] - med[3][r]) / med[0][r]);
  }
  printf("over %d rounds of %d calls, medians: ref %.3f ms; ref/slow %.3f (range %.3f-%.3f); ref/twice %.3f; "
         "copies/ref %.3f; (slow - twice - copies)/ref %.3f\n", rounds, calls, 1e3 * median(med[0]), median(rs),
         *std::min_element(rs.begin(), rs.end()), *std::max_element(rs.begin(), rs.end()), median(rt), median(cr),
         median(ex));
  for (int v = 0; v < 4; ++v) printf("%s median %.3f ms\n", names[v], 1e3 * median(med[v]));
  return 0;
}

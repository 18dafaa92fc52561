#include <cstdio>
#include <omp.h>
#include <vector>

int main() {
    const long n = 50'000'000;
    std::vector<float> x(n, 1.0f);
    double sum = 0.0;
    double t0 = omp_get_wtime();
    #pragma omp parallel for reduction(+ : sum) schedule(static)
    for (long i = 0; i < n; ++i) sum += x[i] * x[i];
    double t1 = omp_get_wtime();
    std::printf("sum=%.1f threads=%d time=%.3fs\n", sum, omp_get_max_threads(), t1 - t0);
}

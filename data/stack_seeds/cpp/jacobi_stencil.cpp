// 2D Jacobi iteration for the Laplace equation on a square grid with fixed boundary.
#include <cmath>
#include <vector>

double jacobi(std::vector<double>& u, int n, int max_iter, double tol) {
    std::vector<double> next(u);
    double diff = 0.0;
    for (int it = 0; it < max_iter; ++it) {
        diff = 0.0;
        #pragma omp parallel for reduction(max:diff)
        for (int i = 1; i < n - 1; ++i) {
            for (int j = 1; j < n - 1; ++j) {
                double v = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] +
                                   u[i * n + j - 1] + u[i * n + j + 1]);
                diff = std::fmax(diff, std::fabs(v - u[i * n + j]));
                next[i * n + j] = v;
            }
        }
        u.swap(next);
        if (diff < tol) break;
    }
    return diff;
}

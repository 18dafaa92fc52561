// Blocked dense matrix multiplication, row-major storage.
#include <vector>
#include <algorithm>
#include <cstddef>

void matmul_blocked(const std::vector<double>& a, const std::vector<double>& b,
                    std::vector<double>& c, std::size_t n, std::size_t bs = 64) {
    std::fill(c.begin(), c.end(), 0.0);
    for (std::size_t ii = 0; ii < n; ii += bs)
        for (std::size_t kk = 0; kk < n; kk += bs)
            for (std::size_t jj = 0; jj < n; jj += bs)
                for (std::size_t i = ii; i < std::min(ii + bs, n); ++i)
                    for (std::size_t k = kk; k < std::min(kk + bs, n); ++k) {
                        const double aik = a[i * n + k];
                        for (std::size_t j = jj; j < std::min(jj + bs, n); ++j)
                            c[i * n + j] += aik * b[k * n + j];
                    }
}

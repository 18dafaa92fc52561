void binsBy10Count(std::vector<double> const& x, std::array<size_t, 10> &bins) {
    bins.fill(0);
    const long n = static_cast<long>(x.size());
#pragma omp parallel
    {
        std::array<size_t, 10> local{};  // private counts: no contention on bins
#pragma omp for schedule(static) nowait
        for (long i = 0; i < n; ++i) {
            size_t b = static_cast<size_t>(x[i] / 10.0);
            local[b > 9 ? 9 : b] += 1;
        }
#pragma omp critical
        for (int b = 0; b < 10; ++b) bins[b] += local[b];
    }
}

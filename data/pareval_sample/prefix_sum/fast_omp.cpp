void prefixSum(std::vector<double> const& x, std::vector<double> &output) {
    const size_t n = x.size();
    std::vector<double> partial;
#pragma omp parallel
    {
        const size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
#pragma omp single
        partial.assign(nt + 1, 0.0);
        // pass 1: each thread scans its block; pass 2: add the sum of the blocks before it
        const size_t lo = n * t / nt, hi = n * (t + 1) / nt;
        double s = 0.0;
        for (size_t i = lo; i < hi; ++i) {
            s += x[i];
            output[i] = s;
        }
        partial[t + 1] = s;
#pragma omp barrier
        double offset = 0.0;
        for (size_t k = 0; k <= t; ++k) offset += partial[k];
        for (size_t i = lo; i < hi; ++i) output[i] += offset;
    }
}

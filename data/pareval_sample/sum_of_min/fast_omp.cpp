double sumOfMinimumElements(std::vector<double> const& x, std::vector<double> const& y) {
    double sum = 0.0;
    const long n = static_cast<long>(x.size());
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (long i = 0; i < n; ++i) {
        sum += std::min(x[i], y[i]);
    }
    return sum;
}

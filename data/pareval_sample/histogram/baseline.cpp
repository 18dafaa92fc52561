void binsBy10Count(std::vector<double> const& x, std::array<size_t, 10> &bins) {
    bins.fill(0);
    for (double v : x) {
        size_t b = static_cast<size_t>(v / 10.0);
        if (b > 9) b = 9;
        bins[b] += 1;
    }
}

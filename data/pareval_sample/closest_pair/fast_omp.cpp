double closestPair(std::vector<Point> const& points) {
    if (points.size() < 2) return 0.0;
    double best = std::numeric_limits<double>::max();
    const long n = static_cast<long>(points.size());
#pragma omp parallel for reduction(min : best) schedule(dynamic, 16)
    for (long i = 0; i < n - 1; ++i) {
        const double xi = points[i].x, yi = points[i].y;
        for (long j = i + 1; j < n; ++j) {
            const double dx = xi - points[j].x, dy = yi - points[j].y;
            const double d = dx * dx + dy * dy;
            best = d < best ? d : best;
        }
    }
    return std::sqrt(best);
}

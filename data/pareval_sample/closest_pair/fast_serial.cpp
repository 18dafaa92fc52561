double closestPair(std::vector<Point> const& points) {
    if (points.size() < 2) return 0.0;
    // compare squared distances; one square root at the end (sqrt is monotonic)
    double best = std::numeric_limits<double>::max();
    const size_t n = points.size();
    for (size_t i = 0; i + 1 < n; ++i) {
        const double xi = points[i].x, yi = points[i].y;
        for (size_t j = i + 1; j < n; ++j) {
            const double dx = xi - points[j].x, dy = yi - points[j].y;
            const double d = dx * dx + dy * dy;
            best = d < best ? d : best;
        }
    }
    return std::sqrt(best);
}

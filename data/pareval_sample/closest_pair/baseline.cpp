double closestPair(std::vector<Point> const& points) {
    if (points.size() < 2) return 0.0;
    double best = std::numeric_limits<double>::max();
    for (size_t i = 0; i + 1 < points.size(); ++i) {
        for (size_t j = i + 1; j < points.size(); ++j) {
            const double dx = points[i].x - points[j].x, dy = points[i].y - points[j].y;
            best = std::min(best, std::sqrt(dx * dx + dy * dy));
        }
    }
    return best;
}

def fit_line(xs, ys):
    """Ordinary least squares for y = a + b x."""
    n = len(xs)
    if n < 2:
        raise ValueError("need at least two points")
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    if sxx == 0:
        raise ValueError("all x values are equal")
    b = sxy / sxx
    a = my - b * mx
    residuals = [y - (a + b * x) for x, y in zip(xs, ys)]
    r2 = 1 - sum(r * r for r in residuals) / sum((y - my) ** 2 for y in ys)
    return a, b, r2

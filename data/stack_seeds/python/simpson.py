import math


def simpson(f, a, b, n=1000):
    """Composite Simpson's rule; n is rounded up to an even number of intervals."""
    if n % 2:
        n += 1
    h = (b - a) / n
    total = f(a) + f(b)
    for i in range(1, n):
        total += (4 if i % 2 else 2) * f(a + i * h)
    return total * h / 3


if __name__ == "__main__":
    approx = simpson(math.sin, 0.0, math.pi)
    print(f"integral of sin over [0, pi] = {approx:.10f} (error {abs(approx - 2):.2e})")

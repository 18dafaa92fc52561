"""Per-column mean and standard deviation of a numeric CSV file."""
import csv
import math
import sys


def column_stats(path):
    sums, sq, count = None, None, 0
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        sums = [0.0] * len(header)
        sq = [0.0] * len(header)
        for row in reader:
            for i, cell in enumerate(row):
                v = float(cell)
                sums[i] += v
                sq[i] += v * v
            count += 1
    for name, s, q in zip(header, sums, sq):
        mean = s / count
        yield name, mean, math.sqrt(max(q / count - mean * mean, 0.0))


if __name__ == "__main__":
    for name, mean, std in column_stats(sys.argv[1]):
        print(f"{name}: mean={mean:.4f} std={std:.4f}")

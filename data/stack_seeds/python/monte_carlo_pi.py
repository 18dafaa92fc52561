import random
import statistics


def estimate_pi(samples: int, rng: random.Random) -> float:
    inside = 0
    for _ in range(samples):
        x, y = rng.random(), rng.random()
        if x * x + y * y <= 1.0:
            inside += 1
    return 4.0 * inside / samples


def run_trials(trials=20, samples=100_000, seed=42):
    rng = random.Random(seed)
    estimates = [estimate_pi(samples, rng) for _ in range(trials)]
    return statistics.mean(estimates), statistics.stdev(estimates)


if __name__ == "__main__":
    mean, std = run_trials()
    print(f"pi ~= {mean:.5f} +- {std:.5f}")

import numpy as np


def heat_equation(u0: np.ndarray, alpha: float, dt: float, dx: float, steps: int) -> np.ndarray:
    """Explicit finite differences for u_t = alpha * u_xx with fixed ends."""
    r = alpha * dt / dx**2
    if r > 0.5:
        raise ValueError(f"unstable: r = {r:.3f} > 0.5")
    u = u0.astype(float).copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u

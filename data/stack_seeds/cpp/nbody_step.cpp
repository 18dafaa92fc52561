#include <cmath>
#include <vector>

struct Body { double x, y, z, vx, vy, vz, m; };

void step(std::vector<Body>& bodies, double dt, double softening = 1e-9) {
    const std::size_t n = bodies.size();
    for (std::size_t i = 0; i < n; ++i) {
        double ax = 0, ay = 0, az = 0;
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            double dx = bodies[j].x - bodies[i].x;
            double dy = bodies[j].y - bodies[i].y;
            double dz = bodies[j].z - bodies[i].z;
            double r2 = dx * dx + dy * dy + dz * dz + softening;
            double inv = bodies[j].m / (r2 * std::sqrt(r2));
            ax += dx * inv; ay += dy * inv; az += dz * inv;
        }
        bodies[i].vx += ax * dt; bodies[i].vy += ay * dt; bodies[i].vz += az * dt;
    }
    for (auto& b : bodies) { b.x += b.vx * dt; b.y += b.vy * dt; b.z += b.vz * dt; }
}

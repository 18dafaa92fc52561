struct Context {
    std::vector<Point> points;
    double result = 0.0, expected = 0.0;
};

Context* init() {
    Context* c = new Context;
    c->points.resize(4000);
    uint64_t seed = 41;
    for (auto& p : c->points) {
        p.x = perfalign_uniform(seed, -1000.0, 1000.0);
        p.y = perfalign_uniform(seed, -1000.0, 1000.0);
    }
    c->expected = perfalign_reference_closestPair(c->points);
    return c;
}

void reset(Context* c) { c->result = 0.0; }

void compute(Context* c) { c->result = closestPair(c->points); }

bool validate(Context* c) { return perfalign_close(c->result, c->expected, 1e-9, 1e-12); }

struct Context {
    std::vector<Point> points;
    double result = 0.0;
};

Context* init() {
    Context* c = new Context;
    c->points.resize(4000);
    return c;
}

void reset(Context* c) {
    for (auto& p : c->points) {
        p.x = perfalign_uniform(-1000.0, 1000.0);
        p.y = perfalign_uniform(-1000.0, 1000.0);
    }
    c->result = 0.0;
}

void compute(Context* c) { c->result = closestPair(c->points); }

void fingerprint(Context* c) { perfalign_fp(c->result); }

struct Context {
    std::vector<double> x, y;
    double result = 0.0;
};

Context* init() {
    Context* c = new Context;
    const size_t n = 12000000;
    c->x.resize(n);
    c->y.resize(n);
    return c;
}

void reset(Context* c) {
    fillRand(c->x, -100.0, 100.0);
    fillRand(c->y, -100.0, 100.0);
    c->result = 0.0;
}

void compute(Context* c) { c->result = sumOfMinimumElements(c->x, c->y); }

void fingerprint(Context* c) { perfalign_fp(c->result); }

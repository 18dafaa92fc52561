struct Context {
    std::vector<double> x, y;
    double result = 0.0, expected = 0.0;
};

Context* init() {
    Context* c = new Context;
    const size_t n = 12000000;
    c->x.resize(n);
    c->y.resize(n);
    perfalign_fill(c->x, -100.0, 100.0, 11);
    perfalign_fill(c->y, -100.0, 100.0, 12);
    c->expected = perfalign_reference_sumOfMinimumElements(c->x, c->y);
    return c;
}

void reset(Context* c) { c->result = 0.0; }

void compute(Context* c) { c->result = sumOfMinimumElements(c->x, c->y); }

bool validate(Context* c) { return perfalign_close(c->result, c->expected, 1e-6, 1e-6); }

struct Context {
    std::vector<double> x, output, expected;
};

Context* init() {
    Context* c = new Context;
    const size_t n = 12000000;
    c->x.resize(n);
    perfalign_fill(c->x, 0.0, 1.0, 21);
    c->output.assign(n, 0.0);
    c->expected.assign(n, 0.0);
    perfalign_reference_prefixSum(c->x, c->expected);
    return c;
}

void reset(Context* c) { std::fill(c->output.begin(), c->output.end(), 0.0); }

void compute(Context* c) { prefixSum(c->x, c->output); }

bool validate(Context* c) { return perfalign_all_close(c->output, c->expected, 1e-6, 1e-6); }

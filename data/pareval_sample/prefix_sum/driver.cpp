struct Context {
    std::vector<double> x, output;
};

Context* init() {
    Context* c = new Context;
    const size_t n = 12000000;
    c->x.resize(n);
    c->output.resize(n);
    return c;
}

void reset(Context* c) {
    fillRand(c->x, 0.0, 1.0);
    std::fill(c->output.begin(), c->output.end(), 0.0);
}

void compute(Context* c) { prefixSum(c->x, c->output); }

void fingerprint(Context* c) { perfalign_fp(c->output); }

struct Context {
    size_t N = 2500;
    std::vector<double> input, output;
};

Context* init() {
    Context* c = new Context;
    c->input.resize(c->N * c->N);
    c->output.resize(c->N * c->N);
    return c;
}

void reset(Context* c) {
    fillRand(c->input, -10.0, 10.0);
    std::fill(c->output.begin(), c->output.end(), 0.0);
}

void compute(Context* c) { jacobi2D(c->input, c->output, c->N); }

void fingerprint(Context* c) { perfalign_fp(c->output); }

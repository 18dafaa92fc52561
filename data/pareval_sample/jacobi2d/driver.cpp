struct Context {
    size_t N = 2500;
    std::vector<double> input, output, expected;
};

Context* init() {
    Context* c = new Context;
    c->input.resize(c->N * c->N);
    perfalign_fill(c->input, -10.0, 10.0, 51);
    c->output.assign(c->N * c->N, 0.0);
    c->expected.assign(c->N * c->N, 0.0);
    perfalign_reference_jacobi2D(c->input, c->expected, c->N);
    return c;
}

void reset(Context* c) { std::fill(c->output.begin(), c->output.end(), 0.0); }

void compute(Context* c) { jacobi2D(c->input, c->output, c->N); }

bool validate(Context* c) { return perfalign_all_close(c->output, c->expected, 1e-9, 1e-12); }

struct Context {
    int m = 2800, n = 3000;
    std::vector<double> A, x, y, tmp, expected;
};

Context* init() {
    Context* c = new Context;
    const int m = c->m, n = c->n;
    c->A.resize((size_t)m * n); c->x.resize(n);
    for (int i = 0; i < n; i++) c->x[i] = 1 + (i / (double)n);
    for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) c->A[(size_t)i * n + j] = (double)((i + j) % n) / (5 * m);
    std::vector<double> t(m);
    c->expected.assign(n, 0.0);
    perfalign_reference_kernel_atax(m, n, c->A.data(), c->x.data(), c->expected.data(), t.data());
    return c;
}

void reset(Context* c) { c->y.assign(c->n, 0.0); c->tmp.assign(c->m, 0.0); }

void compute(Context* c) { kernel_atax(c->m, c->n, c->A.data(), c->x.data(), c->y.data(), c->tmp.data()); }

bool validate(Context* c) { return perfalign_all_close(c->y, c->expected); }

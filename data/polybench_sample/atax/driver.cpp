struct Context {
    int m = 2800, n = 3000;
    std::vector<double> A, x, y, tmp, A0, x0;  // *0: the pristine values
};

Context* init() {
    Context* c = new Context;
    const int m = c->m, n = c->n;
    c->A0.resize((size_t)m * n); c->x0.resize(n);
    for (int i = 0; i < n; i++) c->x0[i] = 1 + (i / (double)n);
    for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) c->A0[(size_t)i * n + j] = (double)((i + j) % n) / (5 * m);
    return c;
}

void reset(Context* c) {
    perfalign_fresh(c->A, c->A0); perfalign_fresh(c->x, c->x0);
    c->y.assign(c->n, 0.0); c->tmp.assign(c->m, 0.0);
}

void compute(Context* c) { kernel_atax(c->m, c->n, c->A.data(), c->x.data(), c->y.data(), c->tmp.data()); }

void fingerprint(Context* c) { perfalign_fp(c->y); }

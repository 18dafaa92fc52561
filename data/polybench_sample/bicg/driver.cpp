struct Context {
    int m = 2800, n = 3000;
    std::vector<double> A, s, q, p, r, expected_s, expected_q;
};

Context* init() {
    Context* c = new Context;
    const int m = c->m, n = c->n;
    c->A.resize((size_t)n * m); c->p.resize(m); c->r.resize(n);
    for (int i = 0; i < m; i++) c->p[i] = (double)(i % m) / m;
    for (int i = 0; i < n; i++) {
        c->r[i] = (double)(i % n) / n;
        for (int j = 0; j < m; j++) c->A[(size_t)i * m + j] = (double)(i * (j + 1) % n) / n;
    }
    c->expected_s.assign(m, 0.0);
    c->expected_q.assign(n, 0.0);
    perfalign_reference_kernel_bicg(m, n, c->A.data(), c->expected_s.data(), c->expected_q.data(), c->p.data(), c->r.data());
    return c;
}

void reset(Context* c) { c->s.assign(c->m, 0.0); c->q.assign(c->n, 0.0); }

void compute(Context* c) { kernel_bicg(c->m, c->n, c->A.data(), c->s.data(), c->q.data(), c->p.data(), c->r.data()); }

bool validate(Context* c) {
    return perfalign_all_close(c->s, c->expected_s) && perfalign_all_close(c->q, c->expected_q);
}

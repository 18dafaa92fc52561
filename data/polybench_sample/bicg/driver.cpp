struct Context {
    int m = 2800, n = 3000;
    std::vector<double> A, s, q, p, r, A0, p0, r0;  // *0: the pristine values
};

Context* init() {
    Context* c = new Context;
    const int m = c->m, n = c->n;
    c->A0.resize((size_t)n * m); c->p0.resize(m); c->r0.resize(n);
    for (int i = 0; i < m; i++) c->p0[i] = (double)(i % m) / m;
    for (int i = 0; i < n; i++) {
        c->r0[i] = (double)(i % n) / n;
        for (int j = 0; j < m; j++) c->A0[(size_t)i * m + j] = (double)(i * (j + 1) % n) / n;
    }
    return c;
}

void reset(Context* c) {
    perfalign_fresh(c->A, c->A0); perfalign_fresh(c->p, c->p0); perfalign_fresh(c->r, c->r0);
    c->s.assign(c->m, 0.0); c->q.assign(c->n, 0.0);
}

void compute(Context* c) { kernel_bicg(c->m, c->n, c->A.data(), c->s.data(), c->q.data(), c->p.data(), c->r.data()); }

void fingerprint(Context* c) { perfalign_fp(c->s); perfalign_fp(c->q); }

struct Context {
    int n = 2500;
    std::vector<double> A, x1, x2, y_1, y_2, A0, x1_0, x2_0, y_1_0, y_2_0;  // *0: the pristine values
};

Context* init() {
    Context* c = new Context;
    const int n = c->n;
    c->A0.resize((size_t)n * n); c->x1_0.resize(n); c->x2_0.resize(n); c->y_1_0.resize(n); c->y_2_0.resize(n);
    for (int i = 0; i < n; i++) {
        c->x1_0[i] = (double)(i % n) / n;
        c->x2_0[i] = (double)((i + 1) % n) / n;
        c->y_1_0[i] = (double)((i + 3) % n) / n;
        c->y_2_0[i] = (double)((i + 4) % n) / n;
        for (int j = 0; j < n; j++) c->A0[(size_t)i * n + j] = (double)(i * j % n) / n;
    }
    return c;
}

void reset(Context* c) {
    perfalign_fresh(c->A, c->A0); perfalign_fresh(c->x1, c->x1_0); perfalign_fresh(c->x2, c->x2_0);
    perfalign_fresh(c->y_1, c->y_1_0); perfalign_fresh(c->y_2, c->y_2_0);
}

void compute(Context* c) { kernel_mvt(c->n, c->x1.data(), c->x2.data(), c->y_1.data(), c->y_2.data(), c->A.data()); }

void fingerprint(Context* c) { perfalign_fp(c->x1); perfalign_fp(c->x2); }

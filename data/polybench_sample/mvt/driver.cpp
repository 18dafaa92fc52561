struct Context {
    int n = 2500;
    std::vector<double> A, x1, x2, x1_0, x2_0, y_1, y_2, expected_x1, expected_x2;
};

Context* init() {
    Context* c = new Context;
    const int n = c->n;
    c->A.resize((size_t)n * n); c->x1_0.resize(n); c->x2_0.resize(n); c->y_1.resize(n); c->y_2.resize(n);
    for (int i = 0; i < n; i++) {
        c->x1_0[i] = (double)(i % n) / n;
        c->x2_0[i] = (double)((i + 1) % n) / n;
        c->y_1[i] = (double)((i + 3) % n) / n;
        c->y_2[i] = (double)((i + 4) % n) / n;
        for (int j = 0; j < n; j++) c->A[(size_t)i * n + j] = (double)(i * j % n) / n;
    }
    c->expected_x1 = c->x1_0;
    c->expected_x2 = c->x2_0;
    perfalign_reference_kernel_mvt(n, c->expected_x1.data(), c->expected_x2.data(), c->y_1.data(), c->y_2.data(), c->A.data());
    return c;
}

void reset(Context* c) { c->x1 = c->x1_0; c->x2 = c->x2_0; }

void compute(Context* c) { kernel_mvt(c->n, c->x1.data(), c->x2.data(), c->y_1.data(), c->y_2.data(), c->A.data()); }

bool validate(Context* c) {
    return perfalign_all_close(c->x1, c->expected_x1) && perfalign_all_close(c->x2, c->expected_x2);
}

struct Context {
    int tsteps = 40, n = 500;
    std::vector<double> A, B, A0, B0;  // *0: the pristine values
};

Context* init() {
    Context* c = new Context;
    const int n = c->n;
    c->A0.resize(n * n); c->B0.resize(n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            c->A0[i * n + j] = ((double)i * (j + 2) + 2) / n;
            c->B0[i * n + j] = ((double)i * (j + 3) + 3) / n;
        }
    return c;
}

void reset(Context* c) { perfalign_fresh(c->A, c->A0); perfalign_fresh(c->B, c->B0); }

void compute(Context* c) { kernel_jacobi_2d(c->tsteps, c->n, c->A.data(), c->B.data()); }

void fingerprint(Context* c) { perfalign_fp(c->A); }

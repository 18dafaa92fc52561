struct Context {
    int tsteps = 10, n = 500;
    std::vector<double> A, A0;  // A0: the pristine values
};

Context* init() {
    Context* c = new Context;
    const int n = c->n;
    c->A0.resize(n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) c->A0[i * n + j] = ((double)i * (j + 2) + 2) / n;
    return c;
}

void reset(Context* c) { perfalign_fresh(c->A, c->A0); }

void compute(Context* c) { kernel_seidel_2d(c->tsteps, c->n, c->A.data()); }

void fingerprint(Context* c) { perfalign_fp(c->A); }

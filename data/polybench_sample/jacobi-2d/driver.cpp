struct Context {
    int tsteps = 40, n = 500;
    std::vector<double> A, B, A0, B0, expected_A, expected_B;
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
    c->expected_A = c->A0;
    c->expected_B = c->B0;
    perfalign_reference_kernel_jacobi_2d(c->tsteps, n, c->expected_A.data(), c->expected_B.data());
    return c;
}

void reset(Context* c) { c->A = c->A0; c->B = c->B0; }

void compute(Context* c) { kernel_jacobi_2d(c->tsteps, c->n, c->A.data(), c->B.data()); }

bool validate(Context* c) { return perfalign_all_close(c->A, c->expected_A); }

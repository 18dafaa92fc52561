struct Context {
    int ni = 320, nj = 320, nk = 320;
    double alpha = 1.5, beta = 1.2;
    std::vector<double> A, B, C, C0, expected;
};

Context* init() {
    Context* c = new Context;
    const int ni = c->ni, nj = c->nj, nk = c->nk;
    c->A.resize(ni * nk); c->B.resize(nk * nj); c->C0.resize(ni * nj);
    for (int i = 0; i < ni; i++) for (int j = 0; j < nj; j++) c->C0[i * nj + j] = (double)((i * j + 1) % ni) / ni;
    for (int i = 0; i < ni; i++) for (int k = 0; k < nk; k++) c->A[i * nk + k] = (double)(i * (k + 1) % nk) / nk;
    for (int k = 0; k < nk; k++) for (int j = 0; j < nj; j++) c->B[k * nj + j] = (double)(k * (j + 2) % nj) / nj;
    c->expected = c->C0;
    perfalign_reference_kernel_gemm(ni, nj, nk, c->alpha, c->beta, c->expected.data(), c->A.data(), c->B.data());
    return c;
}

void reset(Context* c) { c->C = c->C0; }

void compute(Context* c) { kernel_gemm(c->ni, c->nj, c->nk, c->alpha, c->beta, c->C.data(), c->A.data(), c->B.data()); }

bool validate(Context* c) { return perfalign_all_close(c->C, c->expected); }

struct Context {
    int ni = 320, nj = 320, nk = 320;
    double alpha = 1.5, beta = 1.2;
    std::vector<double> A, B, C, A0, B0, C0;  // *0: the pristine values
};

Context* init() {
    Context* c = new Context;
    const int ni = c->ni, nj = c->nj, nk = c->nk;
    c->A0.resize(ni * nk); c->B0.resize(nk * nj); c->C0.resize(ni * nj);
    for (int i = 0; i < ni; i++) for (int j = 0; j < nj; j++) c->C0[i * nj + j] = (double)((i * j + 1) % ni) / ni;
    for (int i = 0; i < ni; i++) for (int k = 0; k < nk; k++) c->A0[i * nk + k] = (double)(i * (k + 1) % nk) / nk;
    for (int k = 0; k < nk; k++) for (int j = 0; j < nj; j++) c->B0[k * nj + j] = (double)(k * (j + 2) % nj) / nj;
    return c;
}

void reset(Context* c) { perfalign_fresh(c->A, c->A0); perfalign_fresh(c->B, c->B0); perfalign_fresh(c->C, c->C0); }

void compute(Context* c) { kernel_gemm(c->ni, c->nj, c->nk, c->alpha, c->beta, c->C.data(), c->A.data(), c->B.data()); }

void fingerprint(Context* c) { perfalign_fp(c->C); }

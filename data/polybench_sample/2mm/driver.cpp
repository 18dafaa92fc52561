struct Context {
    int ni = 220, nj = 220, nk = 220, nl = 220;
    double alpha = 1.5, beta = 1.2;
    std::vector<double> A, B, C, D, D0, tmp, expected;
};

Context* init() {
    Context* c = new Context;
    const int ni = c->ni, nj = c->nj, nk = c->nk, nl = c->nl;
    c->A.resize(ni * nk); c->B.resize(nk * nj); c->C.resize(nj * nl); c->D0.resize(ni * nl); c->tmp.assign(ni * nj, 0.0);
    for (int i = 0; i < ni; i++) for (int k = 0; k < nk; k++) c->A[i * nk + k] = (double)((i * k + 1) % ni) / ni;
    for (int k = 0; k < nk; k++) for (int j = 0; j < nj; j++) c->B[k * nj + j] = (double)(k * (j + 1) % nj) / nj;
    for (int k = 0; k < nj; k++) for (int j = 0; j < nl; j++) c->C[k * nl + j] = (double)((k * (j + 3) + 1) % nl) / nl;
    for (int i = 0; i < ni; i++) for (int j = 0; j < nl; j++) c->D0[i * nl + j] = (double)(i * (j + 2) % nk) / nk;
    c->expected = c->D0;
    std::vector<double> scratch(ni * nj);
    perfalign_reference_kernel_2mm(ni, nj, nk, nl, c->alpha, c->beta, scratch.data(), c->A.data(), c->B.data(),
                                   c->C.data(), c->expected.data());
    return c;
}

void reset(Context* c) { c->D = c->D0; }

void compute(Context* c) {
    kernel_2mm(c->ni, c->nj, c->nk, c->nl, c->alpha, c->beta, c->tmp.data(), c->A.data(), c->B.data(), c->C.data(),
               c->D.data());
}

bool validate(Context* c) { return perfalign_all_close(c->D, c->expected); }

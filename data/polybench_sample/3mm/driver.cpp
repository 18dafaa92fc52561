struct Context {
    int ni = 200, nj = 200, nk = 200, nl = 200, nm = 200;
    std::vector<double> A, B, C, D, E, F, G, expected;
};

Context* init() {
    Context* c = new Context;
    const int ni = c->ni, nj = c->nj, nk = c->nk, nl = c->nl, nm = c->nm;
    c->A.resize(ni * nk); c->B.resize(nk * nj); c->C.resize(nj * nm); c->D.resize(nm * nl);
    for (int i = 0; i < ni; i++) for (int j = 0; j < nk; j++) c->A[i * nk + j] = (double)((i * j + 1) % ni) / (5 * ni);
    for (int i = 0; i < nk; i++) for (int j = 0; j < nj; j++) c->B[i * nj + j] = (double)((i * (j + 1) + 2) % nj) / (5 * nj);
    for (int i = 0; i < nj; i++) for (int j = 0; j < nm; j++) c->C[i * nm + j] = (double)(i * (j + 3) % nl) / (5 * nl);
    for (int i = 0; i < nm; i++) for (int j = 0; j < nl; j++) c->D[i * nl + j] = (double)((i * (j + 2) + 2) % nk) / (5 * nk);
    std::vector<double> e(ni * nj), f(nj * nl);
    c->expected.assign(ni * nl, 0.0);
    perfalign_reference_kernel_3mm(ni, nj, nk, nl, nm, e.data(), c->A.data(), c->B.data(), f.data(), c->C.data(),
                                   c->D.data(), c->expected.data());
    return c;
}

void reset(Context* c) {
    c->E.assign(c->ni * c->nj, 0.0);
    c->F.assign(c->nj * c->nl, 0.0);
    c->G.assign(c->ni * c->nl, 0.0);
}

void compute(Context* c) {
    kernel_3mm(c->ni, c->nj, c->nk, c->nl, c->nm, c->E.data(), c->A.data(), c->B.data(), c->F.data(), c->C.data(),
               c->D.data(), c->G.data());
}

bool validate(Context* c) { return perfalign_all_close(c->G, c->expected); }

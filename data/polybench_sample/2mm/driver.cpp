struct Context {
    int ni = 220, nj = 220, nk = 220, nl = 220;
    double alpha = 1.5, beta = 1.2;
    std::vector<double> A, B, C, D, tmp, A0, B0, C0, D0;  // *0: the pristine values
};

Context* init() {
    Context* c = new Context;
    const int ni = c->ni, nj = c->nj, nk = c->nk, nl = c->nl;
    c->A0.resize(ni * nk); c->B0.resize(nk * nj); c->C0.resize(nj * nl); c->D0.resize(ni * nl);
    for (int i = 0; i < ni; i++) for (int k = 0; k < nk; k++) c->A0[i * nk + k] = (double)((i * k + 1) % ni) / ni;
    for (int k = 0; k < nk; k++) for (int j = 0; j < nj; j++) c->B0[k * nj + j] = (double)(k * (j + 1) % nj) / nj;
    for (int k = 0; k < nj; k++) for (int j = 0; j < nl; j++) c->C0[k * nl + j] = (double)((k * (j + 3) + 1) % nl) / nl;
    for (int i = 0; i < ni; i++) for (int j = 0; j < nl; j++) c->D0[i * nl + j] = (double)(i * (j + 2) % nk) / nk;
    return c;
}

void reset(Context* c) {
    perfalign_fresh(c->A, c->A0); perfalign_fresh(c->B, c->B0); perfalign_fresh(c->C, c->C0); perfalign_fresh(c->D, c->D0);
    c->tmp.assign(c->ni * c->nj, 0.0);
}

void compute(Context* c) {
    kernel_2mm(c->ni, c->nj, c->nk, c->nl, c->alpha, c->beta, c->tmp.data(), c->A.data(), c->B.data(), c->C.data(),
               c->D.data());
}

void fingerprint(Context* c) { perfalign_fp(c->D); }

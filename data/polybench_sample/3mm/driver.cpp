struct Context {
    int ni = 200, nj = 200, nk = 200, nl = 200, nm = 200;
    std::vector<double> A, B, C, D, E, F, G, A0, B0, C0, D0;  // *0: the pristine values
};

Context* init() {
    Context* c = new Context;
    const int ni = c->ni, nj = c->nj, nk = c->nk, nl = c->nl, nm = c->nm;
    c->A0.resize(ni * nk); c->B0.resize(nk * nj); c->C0.resize(nj * nm); c->D0.resize(nm * nl);
    for (int i = 0; i < ni; i++) for (int j = 0; j < nk; j++) c->A0[i * nk + j] = (double)((i * j + 1) % ni) / (5 * ni);
    for (int i = 0; i < nk; i++) for (int j = 0; j < nj; j++) c->B0[i * nj + j] = (double)((i * (j + 1) + 2) % nj) / (5 * nj);
    for (int i = 0; i < nj; i++) for (int j = 0; j < nm; j++) c->C0[i * nm + j] = (double)(i * (j + 3) % nl) / (5 * nl);
    for (int i = 0; i < nm; i++) for (int j = 0; j < nl; j++) c->D0[i * nl + j] = (double)((i * (j + 2) + 2) % nk) / (5 * nk);
    return c;
}

void reset(Context* c) {
    perfalign_fresh(c->A, c->A0); perfalign_fresh(c->B, c->B0); perfalign_fresh(c->C, c->C0); perfalign_fresh(c->D, c->D0);
    c->E.assign(c->ni * c->nj, 0.0);
    c->F.assign(c->nj * c->nl, 0.0);
    c->G.assign(c->ni * c->nl, 0.0);
}

void compute(Context* c) {
    kernel_3mm(c->ni, c->nj, c->nk, c->nl, c->nm, c->E.data(), c->A.data(), c->B.data(), c->F.data(), c->C.data(),
               c->D.data(), c->G.data());
}

void fingerprint(Context* c) { perfalign_fp(c->G); }

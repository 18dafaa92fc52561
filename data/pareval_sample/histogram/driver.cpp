struct Context {
    std::vector<double> x;
    std::array<size_t, 10> bins{};
};

Context* init() {
    Context* c = new Context;
    c->x.resize(size_t(1) << 23);
    return c;
}

void reset(Context* c) {
    fillRand(c->x, 0.0, 100.0);
    c->x[0] = 100.0;  // the inclusive upper end
    c->x[1] = 0.0;
    c->bins.fill(0);
}

void compute(Context* c) { binsBy10Count(c->x, c->bins); }

void fingerprint(Context* c) { perfalign_fp(c->bins); }

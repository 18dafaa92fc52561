struct Context {
    std::vector<double> x;
    std::array<size_t, 10> bins{}, expected{};
};

Context* init() {
    Context* c = new Context;
    c->x.resize(size_t(1) << 23);
    perfalign_fill(c->x, 0.0, 100.0, 31);
    c->x[0] = 100.0;  // the inclusive upper end
    c->x[1] = 0.0;
    perfalign_reference_binsBy10Count(c->x, c->expected);
    return c;
}

void reset(Context* c) { c->bins.fill(0); }

void compute(Context* c) { binsBy10Count(c->x, c->bins); }

bool validate(Context* c) { return c->bins == c->expected; }

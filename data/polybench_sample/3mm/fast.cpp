// i-k-j loop order for each product: unit-stride inner loops
static void perfalign_3mm_product(int n, int m, int p, const double* X, const double* Y, double* Z) {
    for (int i = 0; i < n; i++) {
        double* z = Z + i * p;
        for (int j = 0; j < p; j++) z[j] = 0.0;
        for (int k = 0; k < m; ++k) {
            const double x = X[i * m + k];
            const double* y = Y + k * p;
            for (int j = 0; j < p; j++) z[j] += x * y[j];
        }
    }
}

void kernel_3mm(int ni, int nj, int nk, int nl, int nm, double* E, const double* A, const double* B, double* F,
                const double* C, const double* D, double* G) {
    perfalign_3mm_product(ni, nk, nj, A, B, E);
    perfalign_3mm_product(nj, nm, nl, C, D, F);
    perfalign_3mm_product(ni, nj, nl, E, F, G);
}

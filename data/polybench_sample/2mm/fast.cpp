void kernel_2mm(int ni, int nj, int nk, int nl, double alpha, double beta, double* tmp, const double* A, const double* B,
                const double* C, double* D) {
    // i-k-j loop order: unit-stride access to B, C and the output rows
    for (int i = 0; i < ni; i++) {
        double* t = tmp + i * nj;
        for (int j = 0; j < nj; j++) t[j] = 0.0;
        for (int k = 0; k < nk; ++k) {
            const double a = alpha * A[i * nk + k];
            const double* b = B + k * nj;
            for (int j = 0; j < nj; j++) t[j] += a * b[j];
        }
    }
    for (int i = 0; i < ni; i++) {
        double* d = D + i * nl;
        for (int j = 0; j < nl; j++) d[j] *= beta;
        for (int k = 0; k < nj; ++k) {
            const double t = tmp[i * nj + k];
            const double* c = C + k * nl;
            for (int j = 0; j < nl; j++) d[j] += t * c[j];
        }
    }
}

void kernel_mvt(int n, double* x1, double* x2, const double* y_1, const double* y_2, const double* A) {
    for (int i = 0; i < n; i++) {
        double acc = x1[i];
        for (int j = 0; j < n; j++)
            acc += A[i * n + j] * y_1[j];
        x1[i] = acc;
    }
    // A^T y_2 row by row (unit stride); every x2[i] still sums over j in the same order
    for (int j = 0; j < n; j++) {
        const double y = y_2[j];
        const double* a = A + j * n;
        for (int i = 0; i < n; i++)
            x2[i] += a[i] * y;
    }
}

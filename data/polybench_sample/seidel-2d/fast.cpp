void kernel_seidel_2d(int tsteps, int n, double* A) {
    const double ninth = 1.0 / 9.0;
    for (int t = 0; t < tsteps; t++)
        for (int i = 1; i <= n - 2; i++) {
            const double* up = A + (i - 1) * n;
            double* row = A + i * n;
            const double* down = A + (i + 1) * n;
            for (int j = 1; j <= n - 2; j++) {
                // sum the eight values that do not depend on the previous update first:
                // the loop-carried chain shrinks to one add and one multiply
                const double rest = (up[j - 1] + up[j] + up[j + 1]) + (row[j] + row[j + 1])
                                    + (down[j - 1] + down[j] + down[j + 1]);
                row[j] = (rest + row[j - 1]) * ninth;
            }
        }
}

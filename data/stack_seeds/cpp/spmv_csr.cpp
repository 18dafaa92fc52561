#include <vector>

struct CsrMatrix {
    int rows = 0;
    std::vector<int> row_ptr;   // size rows + 1
    std::vector<int> col_idx;
    std::vector<double> values;
};

// y = A * x for a sparse matrix in compressed sparse row format.
void spmv(const CsrMatrix& a, const std::vector<double>& x, std::vector<double>& y) {
    y.assign(a.rows, 0.0);
    for (int r = 0; r < a.rows; ++r) {
        double sum = 0.0;
        for (int k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
            sum += a.values[k] * x[a.col_idx[k]];
        y[r] = sum;
    }
}

#include <bits/stdc++.h>
using namespace std;

const long long MOD = 1000000007;
typedef vector<vector<long long>> matrix;

matrix multiply(matrix A, matrix B) {
    int n = A.size();
    matrix C(n, vector<long long>(n, 0));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++)
                C[i][j] = (C[i][j] + A[i][k] * B[k][j]) % MOD;
    return C;
}

matrix power(matrix A, long long p) {
    if (p == 0) return {{1, 0}, {0, 1}};
    if (p % 2 == 1) return multiply(A, power(A, p - 1));
    matrix half = power(A, p / 2);
    return multiply(half, half);
}

int main() {
    int t;
    cin >> t;
    while (t--) {
        long long n;
        cin >> n;
        matrix M = {{1, 1}, {1, 0}};
        matrix R = power(M, n);
        cout << R[0][1] << endl;
    }
}

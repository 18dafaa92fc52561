MOD = 10**9 + 7


def mat_mult(a, b):
    n, m, p = len(a), len(b), len(b[0])
    return [[sum(a[i][k] * b[k][j] for k in range(m)) % MOD for j in range(p)] for i in range(n)]


def mat_pow(m, e):
    result = [[int(i == j) for j in range(len(m))] for i in range(len(m))]
    while e:
        if e & 1:
            result = mat_mult(result, m)
        m = mat_mult(m, m)
        e >>= 1
    return result


def fibonacci(n):
    return mat_pow([[1, 1], [1, 0]], n)[0][1]

MOD = 10 ** 9 + 7


def mat_mult(A, B):
    return [[(A[0][0] * B[0][0] + A[0][1] * B[1][0]) % MOD, (A[0][0] * B[0][1] + A[0][1] * B[1][1]) % MOD],
            [(A[1][0] * B[0][0] + A[1][1] * B[1][0]) % MOD, (A[1][0] * B[0][1] + A[1][1] * B[1][1]) % MOD]]


def mat_pow(M, p):
    result = [[1, 0], [0, 1]]
    while p:
        if p & 1:
            result = mat_mult(result, M)
        M = mat_mult(M, M)
        p >>= 1
    return result


t = int(input())
for _ in range(t):
    n = int(input())
    print(mat_pow([[1, 1], [1, 0]], n)[0][1])

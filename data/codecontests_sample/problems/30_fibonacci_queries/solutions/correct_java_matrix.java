import java.io.*;

public class FibonacciQueries {
    static final long MOD = 1_000_000_007L;

    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int t = Integer.parseInt(br.readLine().trim());
        StringBuilder sb = new StringBuilder();
        while (t-- > 0) {
            long n = Long.parseLong(br.readLine().trim());
            // r = M^n with M = [[1,1],[1,0]]; F(n) = r01
            long r00 = 1, r01 = 0, r10 = 0, r11 = 1;
            long m00 = 1, m01 = 1, m10 = 1, m11 = 0;
            while (n > 0) {
                if ((n & 1) == 1) {
                    long a = (r00 * m00 + r01 * m10) % MOD, b = (r00 * m01 + r01 * m11) % MOD;
                    long c = (r10 * m00 + r11 * m10) % MOD, d = (r10 * m01 + r11 * m11) % MOD;
                    r00 = a; r01 = b; r10 = c; r11 = d;
                }
                long a = (m00 * m00 + m01 * m10) % MOD, b = (m00 * m01 + m01 * m11) % MOD;
                long c = (m10 * m00 + m11 * m10) % MOD, d = (m10 * m01 + m11 * m11) % MOD;
                m00 = a; m01 = b; m10 = c; m11 = d;
                n >>= 1;
            }
            sb.append(r01).append('\n');
        }
        System.out.print(sb);
    }
}

import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer in = new StreamTokenizer(new BufferedInputStream(System.in));
        in.nextToken();
        int n = (int) in.nval;
        int[] a = new int[n];
        int mx = 1;
        for (int i = 0; i < n; i++) {
            in.nextToken();
            a[i] = (int) in.nval;
            mx = Math.max(mx, a[i]);
        }
        int[] spf = new int[mx + 1];
        for (int i = 2; i <= mx; i++) {
            if (spf[i] != 0) continue;
            for (long j = i; j <= mx; j += i)
                if (spf[(int) j] == 0) spf[(int) j] = i;
        }
        long total = 0;
        for (int v : a) {
            int x = v;
            long s = 1;
            while (x > 1) {
                int p = spf[x];
                long t = 1, pk = 1;
                while (x % p == 0) {
                    x /= p;
                    pk *= p;
                    t += pk;
                }
                s *= t;
            }
            total += s;
        }
        System.out.println(total);
    }
}

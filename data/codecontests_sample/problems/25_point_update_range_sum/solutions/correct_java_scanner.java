import java.util.Scanner;

public class Main {
    public static void main(String[] args) {
        Scanner sc = new Scanner(System.in);
        int n = sc.nextInt(), q = sc.nextInt();
        long[] a = new long[n + 1];
        long[] bit = new long[n + 1];
        for (int i = 1; i <= n; i++) {
            a[i] = sc.nextLong();
            for (int j = i; j <= n; j += j & -j) bit[j] += a[i];
        }
        while (q-- > 0) {
            int t = sc.nextInt();
            if (t == 1) {
                int i = sc.nextInt();
                long x = sc.nextLong();
                long d = x - a[i];
                a[i] = x;
                for (int j = i; j <= n; j += j & -j) bit[j] += d;
            } else {
                int l = sc.nextInt(), r = sc.nextInt();
                long s = 0;
                for (int j = r; j > 0; j -= j & -j) s += bit[j];
                for (int j = l - 1; j > 0; j -= j & -j) s -= bit[j];
                System.out.println(s);
            }
        }
    }
}

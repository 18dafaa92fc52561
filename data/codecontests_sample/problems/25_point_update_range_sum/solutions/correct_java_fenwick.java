import java.io.*;
import java.util.*;

public class FenwickSums {
    static long[] tree;
    static int n;

    static void update(int i, long delta) {
        for (; i <= n; i += i & (-i)) tree[i] += delta;
    }

    static long query(int i) {
        long s = 0;
        for (; i > 0; i -= i & (-i)) s += tree[i];
        return s;
    }

    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        n = nextInt(in);
        int q = nextInt(in);
        long[] a = new long[n + 1];
        tree = new long[n + 1];
        for (int i = 1; i <= n; i++) {
            a[i] = nextInt(in);
            update(i, a[i]);
        }
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < q; k++) {
            int t = nextInt(in), x = nextInt(in), y = nextInt(in);
            if (t == 1) {
                update(x, y - a[x]);
                a[x] = y;
            } else {
                sb.append(query(y) - query(x - 1)).append('\n');
            }
        }
        System.out.print(sb);
    }

    static int nextInt(DataInputStream in) throws IOException {
        int ret = 0;
        int b = in.read();
        while (b < '0') b = in.read();
        while (b >= '0') {
            ret = ret * 10 + (b - '0');
            b = in.read();
        }
        return ret;
    }
}

import java.util.*;

public class IslandBridges {
    static int[] p;

    static int find(int x) {
        int r = x;
        while (p[r] != r) r = p[r];
        while (p[x] != r) {
            int nx = p[x];
            p[x] = r;
            x = nx;
        }
        return r;
    }

    public static void main(String[] args) {
        Scanner sc = new Scanner(System.in);
        int n = sc.nextInt(), q = sc.nextInt();
        p = new int[n + 1];
        for (int i = 0; i <= n; i++) p[i] = i;
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < q; i++) {
            String t = sc.next();
            int u = sc.nextInt(), v = sc.nextInt();
            if (t.equals("+")) {
                int a = find(u), b = find(v);
                if (a != b) p[a] = b;
            } else {
                sb.append(find(u) == find(v) ? "YES" : "NO").append('\n');
            }
        }
        System.out.print(sb);
    }
}

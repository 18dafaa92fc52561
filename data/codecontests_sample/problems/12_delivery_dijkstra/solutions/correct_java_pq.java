import java.io.*;
import java.util.*;

public class DeliveryRoutes {
    static int[] head, nxt, to;
    static long[] wt;
    static int cnt = 0;

    static void addEdge(int u, int v, long w) {
        to[cnt] = v; wt[cnt] = w; nxt[cnt] = head[u]; head[u] = cnt++;
    }

    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        int n = nextInt(in), m = nextInt(in);
        head = new int[n + 1];
        Arrays.fill(head, -1);
        nxt = new int[2 * m]; to = new int[2 * m]; wt = new long[2 * m];
        for (int i = 0; i < m; i++) {
            int u = nextInt(in), v = nextInt(in), w = nextInt(in);
            addEdge(u, v, w);
            addEdge(v, u, w);
        }
        long[] dist = new long[n + 1];
        Arrays.fill(dist, Long.MAX_VALUE);
        dist[1] = 0;
        PriorityQueue<long[]> pq = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
        pq.add(new long[]{0, 1});
        while (!pq.isEmpty()) {
            long[] cur = pq.poll();
            int v = (int) cur[1];
            if (cur[0] > dist[v]) continue;
            for (int e = head[v]; e != -1; e = nxt[e]) {
                long nd = cur[0] + wt[e];
                if (nd < dist[to[e]]) {
                    dist[to[e]] = nd;
                    pq.add(new long[]{nd, to[e]});
                }
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            sb.append(dist[i] == Long.MAX_VALUE ? -1 : dist[i]);
            sb.append(i == n ? '\n' : ' ');
        }
        System.out.print(sb);
    }

    private static int nextInt(DataInputStream in) throws IOException {
        int ret = 0, b;
        do { b = in.read(); } while (b != '-' && (b < '0' || b > '9'));
        boolean neg = false;
        if (b == '-') { neg = true; b = in.read(); }
        while (b >= '0' && b <= '9') { ret = ret * 10 + (b - '0'); b = in.read(); }
        return neg ? -ret : ret;
    }
}

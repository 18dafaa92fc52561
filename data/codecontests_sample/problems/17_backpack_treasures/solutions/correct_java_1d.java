import java.io.*;
import java.util.*;

public class Knapsack {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken());
        int W = Integer.parseInt(st.nextToken());
        long[] dp = new long[W + 1];
        for (int i = 0; i < n; i++) {
            st = new StringTokenizer(br.readLine());
            int w = Integer.parseInt(st.nextToken());
            long v = Long.parseLong(st.nextToken());
            for (int c = W; c >= w; c--) {
                if (dp[c - w] + v > dp[c]) dp[c] = dp[c - w] + v;
            }
        }
        System.out.println(dp[W]);
    }
}

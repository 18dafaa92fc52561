import java.util.*;

public class CoinWays {
    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        int n = in.nextInt(), x = in.nextInt();
        final int MOD = 1_000_000_007;
        int[] dp = new int[x + 1];
        dp[0] = 1;
        for (int i = 0; i < n; i++) {
            int c = in.nextInt();
            for (int s = c; s <= x; s++) {
                dp[s] = (dp[s] + dp[s - c]) % MOD;
            }
        }
        System.out.println(dp[x]);
    }
}

import java.io.*;
import java.util.*;

public class PairSums {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken());
        long k = Long.parseLong(st.nextToken());
        long[] a = new long[n];
        st = new StringTokenizer(br.readLine());
        for (int i = 0; i < n; i++) a[i] = Long.parseLong(st.nextToken());
        Arrays.sort(a);
        long ans = 0;
        int i = 0, j = n - 1;
        while (i < j) {
            if (a[i] + a[j] <= k) {
                ans += j - i;
                i++;
            } else {
                j--;
            }
        }
        System.out.println(ans);
    }
}

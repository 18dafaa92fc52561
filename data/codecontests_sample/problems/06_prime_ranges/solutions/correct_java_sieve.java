import java.io.*;
import java.util.*;

public class PrimeCount {
    static final int N = 1000000;

    public static void main(String[] args) throws IOException {
        boolean[] comp = new boolean[N + 1];
        comp[0] = comp[1] = true;
        for (int i = 2; (long) i * i <= N; i++) {
            if (comp[i]) continue;
            for (int j = i * i; j <= N; j += i) comp[j] = true;
        }
        int[] pre = new int[N + 1];
        for (int i = 1; i <= N; i++) pre[i] = pre[i - 1] + (comp[i] ? 0 : 1);

        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        int q = Integer.parseInt(br.readLine().trim());
        PrintWriter pw = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));
        for (int k = 0; k < q; k++) {
            StringTokenizer st = new StringTokenizer(br.readLine());
            int l = Integer.parseInt(st.nextToken());
            int r = Integer.parseInt(st.nextToken());
            pw.println(pre[r] - pre[l - 1]);
        }
        pw.flush();
    }
}

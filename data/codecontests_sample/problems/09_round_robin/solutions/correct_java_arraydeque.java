import java.io.*;
import java.util.*;

public class RoundRobin {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken());
        long q = Long.parseLong(st.nextToken());
        long[] rem = new long[n];
        long[] fin = new long[n];
        st = new StringTokenizer(br.readLine());
        ArrayDeque<Integer> dq = new ArrayDeque<>();
        for (int i = 0; i < n; i++) {
            rem[i] = Long.parseLong(st.nextToken());
            dq.addLast(i);
        }
        long t = 0;
        while (!dq.isEmpty()) {
            int i = dq.pollFirst();
            if (rem[i] <= q) {
                t += rem[i];
                fin[i] = t;
            } else {
                t += q;
                rem[i] -= q;
                dq.addLast(i);
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            if (i > 0) sb.append(' ');
            sb.append(fin[i]);
        }
        System.out.println(sb);
    }
}

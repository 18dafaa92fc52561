import java.io.*;

public class PatternCounter {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        String t = br.readLine().trim();
        String p = br.readLine().trim();
        char[] a = t.toCharArray(), b = p.toCharArray();
        int m = b.length;
        int[] pi = new int[m];
        for (int i = 1; i < m; i++) {
            int k = pi[i - 1];
            while (k > 0 && b[i] != b[k]) k = pi[k - 1];
            if (b[i] == b[k]) k++;
            pi[i] = k;
        }
        long count = 0;
        int k = 0;
        for (char c : a) {
            while (k > 0 && c != b[k]) k = pi[k - 1];
            if (c == b[k]) k++;
            if (k == m) { count++; k = pi[k - 1]; }
        }
        System.out.println(count);
    }
}

import java.io.*;
import java.util.*;

public class AnagramPairs {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in), 1 << 16);
        int n = Integer.parseInt(in.readLine().trim());
        HashMap<String, Integer> seen = new HashMap<>();
        long pairs = 0;
        for (int i = 0; i < n; i++) {
            char[] c = in.readLine().trim().toCharArray();
            Arrays.sort(c);
            String key = new String(c);
            Integer prev = seen.get(key);
            if (prev == null) prev = 0;
            pairs += prev;
            seen.put(key, prev + 1);
        }
        System.out.println(pairs);
    }
}

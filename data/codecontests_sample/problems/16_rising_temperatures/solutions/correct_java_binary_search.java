import java.io.*;
import java.util.*;

public class RisingTemperatures {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedInputStream(System.in));
        st.nextToken();
        int n = (int) st.nval;
        int[] d = new int[n + 1];
        int len = 0;
        for (int i = 0; i < n; i++) {
            st.nextToken();
            int x = (int) st.nval;
            int lo = 0, hi = len;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (d[mid] < x) lo = mid + 1;
                else hi = mid;
            }
            d[lo] = x;
            if (lo == len) len++;
        }
        System.out.println(len);
    }
}

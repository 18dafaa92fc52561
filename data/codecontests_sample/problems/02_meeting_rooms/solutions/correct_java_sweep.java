import java.io.*;
import java.util.*;

public class MeetingRooms {
    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        int n = nextInt(in);
        int[] s = new int[n], e = new int[n];
        for (int i = 0; i < n; i++) {
            s[i] = nextInt(in);
            e[i] = nextInt(in);
        }
        Arrays.sort(s);
        Arrays.sort(e);
        int cur = 0, best = 0, j = 0;
        for (int i = 0; i < n; i++) {
            while (e[j] <= s[i]) { j++; cur--; }
            cur++;
            best = Math.max(best, cur);
        }
        System.out.println(best);
    }

    private static int nextInt(DataInputStream in) throws IOException {
        int ret = 0, b = in.read();
        while (b < '0') b = in.read();
        while (b >= '0') {
            ret = ret * 10 + (b - '0');
            b = in.read();
        }
        return ret;
    }
}

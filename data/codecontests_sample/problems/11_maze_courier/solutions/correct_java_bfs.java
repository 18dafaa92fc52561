import java.io.*;
import java.util.*;

public class CourierMaze {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int n = Integer.parseInt(st.nextToken());
        int m = Integer.parseInt(st.nextToken());
        char[][] g = new char[n][];
        int sr = 0, sc = 0, tr = 0, tc = 0;
        for (int i = 0; i < n; i++) {
            g[i] = br.readLine().trim().toCharArray();
            for (int j = 0; j < m; j++) {
                if (g[i][j] == 'S') { sr = i; sc = j; }
                if (g[i][j] == 'T') { tr = i; tc = j; }
            }
        }
        int[][] dist = new int[n][m];
        for (int[] row : dist) Arrays.fill(row, -1);
        ArrayDeque<int[]> q = new ArrayDeque<>();
        dist[sr][sc] = 0;
        q.add(new int[]{sr, sc});
        int[] dx = {1, -1, 0, 0}, dy = {0, 0, 1, -1};
        while (!q.isEmpty()) {
            int[] c = q.poll();
            for (int k = 0; k < 4; k++) {
                int x = c[0] + dx[k], y = c[1] + dy[k];
                if (x >= 0 && y >= 0 && x < n && y < m && g[x][y] != '#' && dist[x][y] == -1) {
                    dist[x][y] = dist[c[0]][c[1]] + 1;
                    q.add(new int[]{x, y});
                }
            }
        }
        System.out.println(dist[tr][tc]);
    }
}

import java.util.*;

public class Main {
    public static void main(String[] args) {
        Scanner sc = new Scanner(System.in);
        String s = sc.next();
        StringBuilder sb = new StringBuilder();
        int cnt = 1;
        for (int i = 1; i <= s.length(); i++) {
            if (i < s.length() && s.charAt(i) == s.charAt(i - 1)) {
                cnt++;
            } else {
                sb.append(s.charAt(i - 1));
                sb.append(cnt);
                cnt = 1;
            }
        }
        System.out.println(sb.toString());
    }
}

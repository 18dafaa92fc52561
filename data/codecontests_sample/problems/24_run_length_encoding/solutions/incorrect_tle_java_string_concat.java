import java.util.Scanner;

public class Solution {
    public static void main(String[] args) {
        Scanner sc = new Scanner(System.in);
        String s = sc.nextLine().trim();
        String ans = "";
        // eats the string block by block: every substring and every += copies (quadratic)
        while (!s.isEmpty()) {
            char c = s.charAt(0);
            int k = 0;
            while (k < s.length() && s.charAt(k) == c) k++;
            ans = ans + c;
            for (char d : Integer.toString(k).toCharArray()) ans = ans + d;
            s = s.substring(k);
        }
        System.out.println(ans);
    }
}

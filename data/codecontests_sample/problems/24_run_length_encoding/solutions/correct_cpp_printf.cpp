#include <cstdio>
#include <cstring>

char s[200005];

int main() {
    scanf("%s", s);
    int n = strlen(s);
    int i = 0;
    while (i < n) {
        int j = i;
        while (j < n && s[j] == s[i]) ++j;
        printf("%c%d", s[i], j - i);
        i = j;
    }
    printf("\n");
    return 0;
}

#include <cstdio>

int a[100005];

int main() {
    int n;
    scanf("%d", &n);
    for (int i = 0; i < n; i++) scanf("%d", &a[i]);
    for (int i = 0; i < n; i++) {
        int res = -1;
        for (int j = i + 1; j < n; j++) {
            if (a[j] > a[i]) {
                res = j + 1;
                break;
            }
        }
        printf("%d ", res);
    }
    printf("\n");
    return 0;
}

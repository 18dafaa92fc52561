#include <cstdint>
#include <string>
#include <vector>

// Polynomial rolling hash with prefix tables: O(1) substring hash after O(n) setup.
struct RollingHash {
    static constexpr std::uint64_t MOD = (1ULL << 61) - 1;
    std::vector<std::uint64_t> pre, pw;

    static std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
        __uint128_t r = (__uint128_t)a * b;
        std::uint64_t lo = (std::uint64_t)(r & MOD), hi = (std::uint64_t)(r >> 61);
        std::uint64_t s = lo + hi;
        return s >= MOD ? s - MOD : s;
    }

    RollingHash(const std::string& s, std::uint64_t base = 131) : pre(s.size() + 1), pw(s.size() + 1) {
        pw[0] = 1;
        for (std::size_t i = 0; i < s.size(); ++i) {
            pre[i + 1] = (mul(pre[i], base) + (unsigned char)s[i]) % MOD;
            pw[i + 1] = mul(pw[i], base);
        }
    }

    std::uint64_t get(std::size_t l, std::size_t r) const {  // hash of s[l, r)
        return (pre[r] + MOD - mul(pre[l], pw[r - l])) % MOD;
    }
};

#include <cstdint>
#include <vector>

// Separable 3-tap box blur on an 8-bit grayscale image (clamped edges).
std::vector<std::uint8_t> box_blur(const std::vector<std::uint8_t>& img, int w, int h) {
    std::vector<int> tmp(w * h);
    std::vector<std::uint8_t> out(w * h);
    auto at = [&](int x, int y) { return img[y * w + x]; };
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int l = x > 0 ? x - 1 : 0, r = x + 1 < w ? x + 1 : w - 1;
            tmp[y * w + x] = at(l, y) + at(x, y) + at(r, y);
        }
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int u = y > 0 ? y - 1 : 0, d = y + 1 < h ? y + 1 : h - 1;
            out[y * w + x] = (tmp[u * w + x] + tmp[y * w + x] + tmp[d * w + x]) / 9;
        }
    return out;
}

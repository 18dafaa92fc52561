from itertools import groupby


def rle_encode(data: bytes) -> list[tuple[int, int]]:
    return [(value, len(list(group))) for value, group in groupby(data)]


def rle_decode(pairs: list[tuple[int, int]]) -> bytes:
    return b"".join(bytes([value]) * count for value, count in pairs)


def compression_ratio(data: bytes) -> float:
    encoded = rle_encode(data)
    return len(data) / (2 * len(encoded)) if encoded else 1.0

import re
import sys
from collections import Counter

WORD = re.compile(r"[a-z']+")


def top_words(text, k=10, stop=frozenset({"the", "a", "an", "and", "of", "to", "in"})):
    counts = Counter(w for w in WORD.findall(text.lower()) if w not in stop)
    return counts.most_common(k)


def main():
    text = sys.stdin.read()
    for word, n in top_words(text):
        print(f"{n:6d} {word}")


if __name__ == "__main__":
    main()

import re
from collections import defaultdict
from datetime import datetime

LINE = re.compile(r"^(?P<ts>\S+ \S+) (?P<level>[A-Z]+) \[(?P<module>[\w.]+)\] (?P<msg>.*)$")


def errors_per_hour(lines):
    buckets = defaultdict(int)
    for line in lines:
        m = LINE.match(line.rstrip("\n"))
        if not m or m["level"] not in ("ERROR", "CRITICAL"):
            continue
        ts = datetime.strptime(m["ts"], "%Y-%m-%d %H:%M:%S")
        buckets[ts.replace(minute=0, second=0)] += 1
    return sorted(buckets.items())

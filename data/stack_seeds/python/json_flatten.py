import json
import sys


def flatten(obj, prefix=""):
    """{"a": {"b": [1, 2]}} -> {"a.b.0": 1, "a.b.1": 2}"""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = obj
    return out


if __name__ == "__main__":
    for key, value in sorted(flatten(json.load(sys.stdin)).items()):
        print(f"{key}={value}")

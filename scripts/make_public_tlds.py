#!/usr/bin/env python3
"""Write ralph/data/public_tlds.json: the top-level domains of the Public
Suffix List's ICANN section, as ASCII (punycode) labels.

ralph.sandbox turns them into `*.<tld>` entries of the sandbox's network
allow-list: every DNS name stays reachable while IP literals (127.0.0.2,
0.0.0.0, [::], this machine's own addresses, in any spelling) and single-label
names are not, which a deny-list of exact names cannot achieve.

usage: scripts/make_public_tlds.py [PATH_TO_public_suffix_list.dat]
(default: Debian's publicsuffix package, /usr/share/publicsuffix/public_suffix_list.dat)
"""
from __future__ import annotations

import json
import os
import sys

DEFAULT = "/usr/share/publicsuffix/public_suffix_list.dat"
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ralph", "data", "public_tlds.json")


def icann_tlds(text: str) -> list[str]:
    tlds: set[str] = set()
    inside = False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("// ===BEGIN ICANN DOMAINS==="):
            inside = True
        elif line.startswith("// ===END ICANN DOMAINS==="):
            inside = False
        elif inside and line and not line.startswith("//"):
            label = line.split()[0].lstrip("!").rsplit(".", 1)[-1]
            if label and label != "*":
                tlds.add(label.encode("idna").decode("ascii").lower())
    return sorted(tlds)


def main(argv: list[str]) -> int:
    source = argv[0] if argv else DEFAULT
    with open(source, encoding="utf-8") as f:
        tlds = icann_tlds(f.read())
    data = {"source": "Public Suffix List, ICANN section (" + os.path.basename(source) + ")", "count": len(tlds), "tlds": tlds}
    tmp = OUT + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=0)
        f.write("\n")
    os.replace(tmp, OUT)
    print(f"{OUT}: {len(tlds)} top-level domains")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

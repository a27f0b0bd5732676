#!/usr/bin/env python3
"""The instructions a library's own code ran, from a callgrind output file: what the program's
calls into the library cost (inclusive), less what the library's calls into the libraries below it
cost (the fake CUDA driver, for scripts/host_cost.sh). Allocations and other C library work the
library asks for stay its own.

    python3 scripts/callgrind_share.py CALLGRIND_OUT [--library libnimble.so] [--below libfake_cuda.so ...]

Prints the count. Reads the file format of valgrind's callgrind (ob=/cob=/fn=/cfn=/calls= lines,
name compression); needs no valgrind tools.
"""
import argparse
import re
import sys


def share(path, library, below):
    names = {}  # compressed "(id)" -> object name, per kind

    def name(kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not m:
            return text
        if m.group(2) is not None:
            names[(kind, m.group(1))] = m.group(2)
        return names.get((kind, m.group(1)), "")

    ob = cob = ""
    into, out_of = 0, 0
    after_calls = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if after_calls:  # the call's position and inclusive cost
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                callee = cob or ob
                if not ob.endswith(library) and callee.endswith(library):
                    into += cost
                elif ob.endswith(library) and any(callee.endswith(b) for b in below):
                    out_of += cost
                after_calls, cob = False, ""
            elif line.startswith("ob="):
                ob, cob = name("ob", line[3:]), ""
            elif line.startswith("cob="):
                cob = name("ob", line[4:])
            elif line.startswith("calls="):
                after_calls = True
    return into - out_of


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--library", default="libnimble.so")
    ap.add_argument("--below", nargs="+", default=["libfake_cuda.so", "libcudnn.so.9"])
    args = ap.parse_args()
    try:
        print(share(args.file, args.library, args.below))
    except (OSError, ValueError, IndexError) as e:
        sys.exit("callgrind_share: %s: %s" % (args.file, e))


if __name__ == "__main__":
    main()

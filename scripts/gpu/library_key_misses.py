#!/usr/bin/env python3
"""Library calls whose key (`library_key`: the inputs nimble run's memory skips a call by) was the
same while the kernels they launched were not, in a trace of several steps of one program
(recorded with scripts/gpu/record_steps.sh). Such a key misses an input: nimble run would launch
the bytes of an earlier call for it until a recheck finds the difference.

    python3 scripts/gpu/library_key_misses.py TRACE.json[.gz] [--examples N]

For each miss it prints the call, the first kernel and byte offset that differ, both words, and
where each pointer of the two launches points (allocation + offset) when they differ, which tells
an operand moved from a scratch buffer the library chose."""
import argparse
import collections
import gzip
import json


def library_calls(tasks):
    """{call id: {"symbol", "key", "tasks"}} for the calls that carry a key, in trace order."""
    calls = {}
    for t in tasks:
        cid, key = t.get("library_call_id"), t.get("library_key")
        if cid is None or key is None:
            continue
        call = calls.setdefault(cid, {"symbol": t.get("library_call"), "key": key, "tasks": []})
        if t["kind"] in ("kernel", "memcpy", "memset"):
            call["tasks"].append(t)
    return calls


def launch_of(task):
    """What a launch must repeat for two calls with one key to have done the same."""
    args = task.get("args", {})
    return (task["kind"], task.get("name") or task.get("api"), args.get("bytes"), json.dumps(task.get("copy")),
            json.dumps(task.get("memset")))


def pointers(task):
    """{offset: (alloc, alloc_offset)} of a kernel's pointer arguments."""
    return {p["offset"]: (p["alloc"], p["alloc_offset"]) for p in task.get("args", {}).get("pointers", [])}


def slot_of(task, at):
    """The kernel parameter (offset, size) holding byte `at`, from cuFuncGetParamInfo; None if unknown."""
    for p in task.get("args", {}).get("params", []):
        if p["offset"] <= at < p["offset"] + p["size"]:
            return p["offset"], p["size"]
    return None


def where(value, allocations):
    """Which of the trace's allocations holds address `value`, as text."""
    for a in allocations:
        base = int(a["addr"], 16) if isinstance(a["addr"], str) else a["addr"]
        if base <= value < base + a["size"]:
            return f"allocation {a['id']} ({a.get('kind', 'device')}) + {value - base}"
    return "in no allocation the trace holds"


def first_difference(a, b, allocations=()):
    """Where two calls' launches differ first: text, or None when they are the same."""
    if len(a["tasks"]) != len(b["tasks"]):
        return f"{len(a['tasks'])} launches then {len(b['tasks'])}"
    for i, (x, y) in enumerate(zip(a["tasks"], b["tasks"])):
        if launch_of(x) == launch_of(y):
            continue
        name = (x.get("name") or x.get("api") or x["kind"])[:90]
        if (x.get("name") or x.get("api")) != (y.get("name") or y.get("api")):
            return f"launch {i}: {name} then {(y.get('name') or y.get('api'))[:90]}"
        bx, by = bytes.fromhex(x.get("args", {}).get("bytes") or ""), bytes.fromhex(y.get("args", {}).get("bytes") or "")
        if bx == by:
            return f"launch {i} ({name}): its copy or memset differs"
        at = next((k for k in range(min(len(bx), len(by))) if bx[k] != by[k]), min(len(bx), len(by)))
        word = at - at % 8
        px, py = pointers(x), pointers(y)
        moved = [f"arg@{o}: alloc {px.get(o)} then {py.get(o)}" for o in sorted(set(px) | set(py)) if px.get(o) != py.get(o)]
        wx, wy = bx[word:word + 8], by[word:word + 8]
        slot = slot_of(x, at)
        return (f"launch {i} ({name}), byte {at}"
                + (f" (parameter at {slot[0]}, {slot[1]} bytes)" if slot else " (no parameter holds it)")
                + f": word@{word} {wx[::-1].hex()} then {wy[::-1].hex()}"
                + (f" [{where(int.from_bytes(wx, 'little'), allocations)}; then {where(int.from_bytes(wy, 'little'), allocations)}]"
                   if allocations and len(wx) == 8 and len(wy) == 8 else "")
                + ("; pointers: " + ", ".join(moved) if moved else ""))
    return None


def key_misses(tasks, allocations=()):
    """(calls with a key, keys seen more than once, misses): each miss is (symbol, key, earlier call
    id, later call id, where they differ). Compares each call with the first one of its key."""
    calls = library_calls(tasks)
    first = {}
    repeated = set()
    misses = []
    for cid, call in calls.items():
        k = (call["symbol"], call["key"])
        if k not in first:
            first[k] = cid
            continue
        repeated.add(k)
        diff = first_difference(calls[first[k]], call, allocations)
        if diff:
            misses.append((call["symbol"], call["key"], first[k], cid, diff))
    return len(calls), len(repeated), misses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--examples", type=int, default=20, help="how many misses to show")
    ap.add_argument("--dump", action="store_true", help="print every launch of the first miss's two calls whole")
    a = ap.parse_args()
    with (gzip.open if a.trace.endswith(".gz") else open)(a.trace, "rt") as f:
        trace = json.load(f)
    n, repeated, misses = key_misses(trace["tasks"], trace.get("allocations", []))
    print(f"{n} library calls with a key; {repeated} keys seen more than once; {len(misses)} later calls launched "
          "other work than the first call of their key")
    by_symbol = collections.Counter(m[0] for m in misses)
    for symbol, count in by_symbol.most_common():
        print(f"  {symbol}: {count}")
    for symbol, key, earlier, later, diff in misses[:a.examples]:
        print(f"{symbol} key {key}: call {earlier} then {later}: {diff}")
    if misses and a.dump:
        calls = library_calls(trace["tasks"])
        for cid in misses[0][2:4]:
            for t in calls[cid]["tasks"]:
                args = t.get("args", {})
                print(f"call {cid}: {t.get('name') or t.get('api')}\n  params {args.get('params')}\n"
                      f"  pointers {args.get('pointers')}\n  bytes {args.get('bytes')}")


if __name__ == "__main__":
    main()

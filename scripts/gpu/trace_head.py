"""Print the first tasks of recorded traces (kernel name, launch shape) and where a recorded
iteration's first kernel recurs inside it, and where its copies and syncs are: what a recording's
first calls look like when several recordings of one program begin alike, and what comes between
its iterations. Usage: trace_head.py TRACE.json [N]"""
import json
import sys


def describe(task):
    if task.get("kind") != "kernel":
        return task.get("kind", "?") + " " + str(task.get("direction", task.get("sync", "")))
    launch = task.get("launch", {})
    return "kernel %s grid %s block %s" % (task.get("name", "?")[:70], launch.get("grid"), launch.get("block"))


def main():
    path, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12
    tasks = json.load(open(path))["tasks"]
    print("%s: %d tasks" % (path, len(tasks)))
    for t in tasks[:n]:
        print("  %4d %s" % (t["id"], describe(t)))
    first = tasks[0].get("name") if tasks else None
    again = [t["id"] for t in tasks[1:] if t.get("kind") == "kernel" and t.get("name") == first]
    print("  the first task's kernel recurs at tasks %s" % (again[:20] or "none"))
    others = ["%d %s" % (t["id"], describe(t)) for t in tasks if t.get("kind") != "kernel"]
    print("  not kernels: %s" % ("; ".join(others[:12]) or "none"))
    for t in tasks[-3:]:
        print("  %4d %s (last)" % (t["id"], describe(t)))


main()

#!/usr/bin/env python3
"""Runs a corpus program (tests/programs/) with a profiler range around some of its steps, so
`nimble record` (capture range cudaProfilerApi) records exactly those steps: for looking at what
a program's steps issue when the automatic range does not find them.

    nimble record -o t.json -- python3 scripts/gpu/window_of.py FIRST LAST PROGRAM.py [ARGS...]

opens the range before step FIRST and closes it after step LAST (0-based, both included). The
program itself is unchanged: its per-step hook (corpus_common.step_done) is wrapped.
"""
import ctypes
import os
import runpy
import sys

first, last, program = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
sys.argv = [program] + sys.argv[4:]
sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
import corpus_common  # noqa: E402

cuda = ctypes.CDLL("libcuda.so.1")
done = corpus_common.step_done


def step_done(i, *results):
    done(i, *results)  # the step's digest (its host copy) ends the step
    if i + 1 == first:
        cuda.cuProfilerStart()
    if i == last:
        cuda.cuProfilerStop()


corpus_common.step_done = step_done
if first == 0:
    cuda.cuProfilerStart()
runpy.run_path(program, run_name="__main__")

"""Hardware counters of the calling thread (Linux perf_event_open through ctypes; `perf` itself is not
installed on the GPU machine): instructions, cycles, last-level cache misses and branch misses, in
user mode (what perf_event_paranoid=2 allows). Tells more work (instructions up) from slower work (the same instructions in more
cycles: caches, branch predictors). ThreadCounters().read() is a dict of counts so far; a counter the
machine refuses is left out, and `refused` says why."""
import ctypes
import os
import struct

_PERF_EVENT_OPEN = 298  # x86_64
_TYPE_HARDWARE = 0
_EVENTS = {"cycles": 0, "instructions": 1, "cache_misses": 3, "branch_misses": 5}  # PERF_COUNT_HW_*
_ATTR_SIZE = 128  # struct perf_event_attr, zero-filled past the fields set here
_EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 5, 1 << 6  # its flag bits


def _attr(config):
    buf = bytearray(_ATTR_SIZE)
    struct.pack_into("=IIQ", buf, 0, _TYPE_HARDWARE, _ATTR_SIZE, config)  # type, size, config
    # flags (offset 40): enabled from now, this thread only, kernel and hypervisor excluded
    struct.pack_into("=Q", buf, 40, _EXCLUDE_KERNEL | _EXCLUDE_HV)
    return (ctypes.c_char * _ATTR_SIZE).from_buffer(buf)


class ThreadCounters:
    def __init__(self):
        self.fds, self.refused = {}, {}
        libc = ctypes.CDLL(None, use_errno=True)
        for name, config in _EVENTS.items():
            fd = libc.syscall(_PERF_EVENT_OPEN, _attr(config), 0, -1, -1, 0)  # this thread, any CPU
            if fd < 0:
                self.refused[name] = os.strerror(ctypes.get_errno())
            else:
                self.fds[name] = fd

    def read(self):
        return {name: struct.unpack("=Q", os.read(fd, 8))[0] for name, fd in self.fds.items()}

// Which process of a program writes a trace file that no pattern tells apart: the first to claim
// it. Workers started by torch.multiprocessing.spawn, a sweep's child processes or a shell's
// background jobs share `-o` and have no rank; without a claim the last to exit would overwrite the
// others' traces and summaries. Under the nimble commands a claim is a file in the run's claims
// folder (NIMBLE_OUTPUT_CLAIMS), kept until the run ends: a worker that writes after another has
// ended still gets its own name. Without one (libnimble.so preloaded by hand) it is an flock() on a
// lock file named by a hash of the file's absolute path (in /tmp/nimble-claims-UID, one per output
// path, reused by every run), held for the life of the process: the kernel lets it go when the
// process ends however it ends, so a later run finds it free. (An abstract UNIX socket, tried
// first, did not hold on the GPU machine: two spawned workers both bound one name, though one
// process could not bind it twice.)
#pragma once

#include <string>

namespace nimble::settings {

// Locks the file that stands for `key`; its descriptor (close-on-exec, the lock held while it is
// open), or -1 with errno EADDRINUSE when another open file holds it (else errno says what failed).
int hold_claim(const std::string& key);

// Claims `key` in `folder` for good: true when this call made the claim (a file created there),
// false when one was made before (by any process); true also when none could be made (then as
// before claims existed).
bool claim_in(const std::string& folder, const std::string& key);

// Whether this process may write `path` under its own name: it claimed it first (or claimed it
// before, or the claim could not be tried: then as before claims existed). False when another
// process holds it: one of the same run, where NIMBLE_OUTPUT_CLAIMS names the run's folder (the
// nimble commands make one, and remove it after the program); else a live process. Thread-safe.
bool claim_output(const std::string& path);

}  // namespace nimble::settings

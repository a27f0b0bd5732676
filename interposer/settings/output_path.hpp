// Where one process of a program writes its trace: `-o`'s pattern with %p (the process id) and
// %r (the rank) filled in. A program of several ranks (torchrun, mpirun, srun) preloads nimble
// into every rank; when the pattern names neither, each rank's file gets ".rankR" before
// ".json", so no rank overwrites another's trace or summary. Processes with no rank (workers of
// torch.multiprocessing.spawn, a sweep's children) that record while another live process holds
// the same file get ".pidP" instead (output_claim.hpp). CUDA-free; the hooks and the CLI use the
// same rules.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace nimble::settings {

struct ProcessIdentity {
  long pid = 0;
  std::optional<long> rank;  // from the launcher's variables
  long world_size = 1;
  bool output_held_elsewhere = false;  // another live process writes the file the pattern names
};

// The rank and world size the launcher exported: RANK/WORLD_SIZE (torchrun, torch.distributed),
// OMPI_COMM_WORLD_RANK/_SIZE (Open MPI), PMI_RANK/PMI_SIZE (MPICH, Intel MPI), SLURM_PROCID/
// SLURM_NTASKS (srun); the first pair whose rank is set wins. `getenv` is std::getenv in the
// library (a parameter, for tests).
ProcessIdentity process_identity(const std::function<const char*(const char*)>& getenv, long pid);

// TRACE.json -> TRACE.rankR.json (else TRACE.rankR appended).
std::string rank_path(const std::string& path, long rank);
// TRACE.json -> TRACE.pidP.json (else TRACE.pidP appended).
std::string pid_path(const std::string& path, long pid);

// Whether the pattern alone gives this process a file no other process of the program writes:
// it names %p or %r, or the process is one rank of several (expand_output_path adds the rank).
bool output_is_its_own(const std::string& pattern, const ProcessIdentity& who);

// The pattern with %p and %r (0 without a rank) filled in; in a world of several ranks, a
// pattern with neither becomes rank_path(pattern, rank); else, when another process holds that
// file, pid_path(pattern, pid).
std::string expand_output_path(const std::string& pattern, const ProcessIdentity& who);

}  // namespace nimble::settings

/* nimble's C API for rewiring a framework's captured CUDA graph (libnimble_graph.so), used by the
 * Python package (python/nimble, through ctypes). A session follows one stream capture: after
 * each operation of the framework, nimble_graph_mark says which tensors the nodes captured since
 * the previous mark belong to; nimble_graph_rewire then replaces the captured graph's edges by the
 * dependencies inferred from memory (docs/python.md). All functions are thread-compatible: use one
 * session from one thread at a time. */
#ifndef NIMBLE_GRAPH_H
#define NIMBLE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NIMBLE_GRAPH_API __attribute__((visibility("default")))

typedef struct nimble_graph_session nimble_graph_session;

/* A new session, or NULL with the reason in `error` when the CUDA driver cannot be loaded
 * (NIMBLE_LIBCUDA names another driver library, for tests). */
NIMBLE_GRAPH_API nimble_graph_session* nimble_graph_session_new(char* error, size_t error_size);
NIMBLE_GRAPH_API void nimble_graph_session_free(nimble_graph_session* session);

/* The nodes `stream`'s capture gained since the previous mark were issued by one operation that
 * touches these `count` tensors (address and size of each storage; `written` nonzero when the
 * operation writes it). count 0: nodes of unknown origin (every pointer they hold counts as its
 * whole allocation, read and written). Returns the number of nodes the mark attributed (0 or
 * more), or -1 with the reason in `error`. */
NIMBLE_GRAPH_API int nimble_graph_mark(nimble_graph_session* session, uint64_t stream, size_t count, const uint64_t* addresses,
                      const uint64_t* sizes, const uint8_t* written, char* error, size_t error_size);

/* Replaces every edge of `graph` (a CUgraph the session's marks followed, not launched by the
 * framework yet) by `wiring`: "reduced" (inferred dependencies, transitively reduced),
 * "schedule" (the Nimble algorithm's streams as edges) or "chain" (the capture order). Writes a
 * JSON report (counts of nodes, edges, pointers) into `report`; returns 0, or -1 with the
 * reason in `report` (the graph then keeps its edges). */
NIMBLE_GRAPH_API int nimble_graph_rewire(nimble_graph_session* session, uint64_t graph, const char* wiring, char* report,
                        size_t report_size);

#ifdef __cplusplus
}
#endif

#endif

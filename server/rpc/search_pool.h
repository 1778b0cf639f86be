/*
 * search_pool.h - a bounded pool of search threads with a bounded queue.
 *
 * `threads` workers run submitted tasks in FIFO order; at most `max_queue` tasks wait for a
 * worker. A submit that would exceed the queue is refused (SP_ELIMIT) so the caller can answer
 * UNAVAILABLE at once instead of piling up work; after sp_pool_close() submits are refused
 * with SP_EUNSUPPORTED. Gauges (running, queued) are readable at any time without waiting.
 *
 * Memory: the pool owns its queue entries; a task's argument belongs to the task.
 */
#ifndef SP_RPC_SEARCH_POOL_H
#define SP_RPC_SEARCH_POOL_H

#include "ir/err.h"

typedef struct sp_pool sp_pool;
typedef void (*sp_pool_fn)(void *arg);

/* `at_exit` (may be NULL) runs on each worker thread just before it exits (per-thread
 * cleanup of what the tasks used). */
int sp_pool_new(int threads, int max_queue, void (*at_exit)(void), sp_pool **out, sp_err *err);
/* Queues fn(arg). SP_OK, SP_ELIMIT (queue full), SP_EUNSUPPORTED (closed), SP_ENOMEM. */
int sp_pool_submit(sp_pool *p, sp_pool_fn fn, void *arg);
void sp_pool_gauges(sp_pool *p, int *running, int *queued);
int sp_pool_threads(const sp_pool *p);
/* Refuses new tasks, runs the queued ones, joins the workers, frees. NULL is a no-op. */
void sp_pool_close(sp_pool *p);

#endif /* SP_RPC_SEARCH_POOL_H */

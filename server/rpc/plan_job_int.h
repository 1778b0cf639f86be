/*
 * plan_job_int.h - the searches behind Plan and PlanStream (plan_job.c: one search per key,
 * shared by its waiters) and the answering helpers the jobs share with the handlers
 * (plan_service.c). Internal to server/rpc.
 *
 * Locking: the functions marked "under s->mu" expect the service's mutex held; the others
 * take it themselves when they need it.
 */
#ifndef SP_RPC_PLAN_JOB_INT_H
#define SP_RPC_PLAN_JOB_INT_H

#include "ir/run_ctl.h"
#include "rpc/plan_request.h"
#include "rpc/service_int.h"
#include "rpc/test_hooks.h"

/* ------------------------------------------------------------------ plan_service.c */

/* "Plan" or "PlanStream". */
const char *sp__plan_method(bool stream);
/* Sends a finished answer (a packed PlanResponse) to a unary or streaming call. */
void sp__plan_deliver(sp_rpc_call *call, bool stream, const uint8_t *bytes, size_t n);
/* Answers a call with an error (and logs it). */
void sp__plan_fail(sp_service *s, sp_rpc_call *call, bool stream, const char *key, int status,
                   const char *msg, int64_t retry_ms);
/* A progress event to a streaming call (`p` may be NULL: the stage alone). */
void sp__plan_progress(sp_rpc_call *call, const char *stage, const sp_progress *p,
                       double elapsed);
/* Keeps a final summary answer in memory for exact repeats of the request bytes `raw`. */
void sp__plan_remember(sp_service *s, const char *raw, int detail, const sp_store_plan *sp);

/* ------------------------------------------------------------------ plan_job.c */

/* A caller waiting for a search. */
typedef struct sp__waiter sp__waiter;

/* A waiter for `call`, answered with `detail` in its own `labels` (taken over); its end (when
 * it must have its answer) from the call's deadline, less the time an answer of a module of
 * `nops` ops takes to build and send, and from its time limit. NULL: out of memory (the
 * labels are freed). */
sp__waiter *sp__waiter_new(sp_service *s, sp_rpc_call *call, bool stream, int detail,
                           sp_rpc_labels *labels, double time_limit, int64_t nops);
void sp__waiter_free(sp__waiter *w);

/* Under s->mu: adds `w` to the search running for `key`, if there is one (true). */
bool sp__job_join(sp_service *s, const char *key, sp__waiter *w);
/* Under s->mu: a new search for *req (whose bytes are buf[0, len)) with waiter `w`, queued on
 * the pool. SP_OK: the job owns the request (*req is emptied) and `w`. Else SP_ELIMIT (the
 * queue is full) or SP_ENOMEM: `w` is still the caller's, and so is *unstarted (NULL when
 * none was made), a job that may own the request; the caller frees it with sp__job_free once
 * the lock is released. */
int sp__job_start(sp_service *s, sp_rpc_request *req, sp__waiter *w, const uint8_t *buf,
                  size_t len, double asked, sp_job **unstarted);
void sp__job_free(sp_job *j);
/* The calls' cancel hook (rpc_server.h; arg: the service): the call went away while waiting. */
void sp__job_on_cancel(sp_rpc_call *call, void *svc);

#endif /* SP_RPC_PLAN_JOB_INT_H */

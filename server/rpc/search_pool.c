/*
 * search_pool.c - fixed worker threads over a mutex-protected FIFO (see search_pool.h).
 * Invariant: queued == length of the list; running counts tasks between dequeue and return.
 */
#include "rpc/search_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct task {
  sp_pool_fn fn;
  void *arg;
  struct task *next;
} task;

struct sp_pool {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  task *head, *tail;
  int queued, running, max_queue, nthreads, nstarted;
  bool closed;
  void (*at_exit)(void);
  pthread_t *threads;
};

static void *worker(void *arg) {
  sp_pool *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->head && !p->closed) pthread_cond_wait(&p->cv, &p->mu);
    task *t = p->head;
    if (!t) break;   /* closed and drained */
    p->head = t->next;
    if (!p->head) p->tail = NULL;
    p->queued--;
    p->running++;
    pthread_mutex_unlock(&p->mu);
    t->fn(t->arg);
    free(t);
    pthread_mutex_lock(&p->mu);
    p->running--;
  }
  pthread_mutex_unlock(&p->mu);
  if (p->at_exit) p->at_exit();
  return NULL;
}

int sp_pool_new(int threads, int max_queue, void (*at_exit)(void), sp_pool **out, sp_err *err) {
  *out = NULL;
  sp_pool *p = calloc(1, sizeof *p);
  if (!p) return sp_err_set(err, SP_ENOMEM, "out of memory");
  p->at_exit = at_exit;
  p->nthreads = threads > 0 ? threads : 1;
  p->max_queue = max_queue >= 0 ? max_queue : 0;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->threads = calloc((size_t)p->nthreads, sizeof *p->threads);
  if (!p->threads) {
    sp_pool_close(p);
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  for (int i = 0; i < p->nthreads; i++) {
    if (pthread_create(&p->threads[i], NULL, worker, p)) {
      sp_pool_close(p);
      return sp_err_set(err, SP_EINTERNAL, "cannot start search thread %d", i);
    }
    p->nstarted++;
  }
  *out = p;
  return SP_OK;
}

int sp_pool_submit(sp_pool *p, sp_pool_fn fn, void *arg) {
  pthread_mutex_lock(&p->mu);
  int rc = SP_OK;
  if (p->closed) {
    rc = SP_EUNSUPPORTED;
  } else if (p->queued >= p->max_queue && p->running >= p->nthreads) {
    rc = SP_ELIMIT;
  } else {
    task *t = malloc(sizeof *t);
    if (!t) {
      rc = SP_ENOMEM;
    } else {
      *t = (task){fn, arg, NULL};
      if (p->tail) p->tail->next = t; else p->head = t;
      p->tail = t;
      p->queued++;
      pthread_cond_signal(&p->cv);
    }
  }
  pthread_mutex_unlock(&p->mu);
  return rc;
}

void sp_pool_gauges(sp_pool *p, int *running, int *queued) {
  pthread_mutex_lock(&p->mu);
  *running = p->running;
  *queued = p->queued;
  pthread_mutex_unlock(&p->mu);
}

int sp_pool_threads(const sp_pool *p) { return p->nthreads; }

void sp_pool_close(sp_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->closed = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nstarted; i++) pthread_join(p->threads[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p->threads);
  free(p);
}

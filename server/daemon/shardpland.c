/*
 * shardpland.c - the shardplan daemon: reads its settings (daemon_config.h), opens the plan
 * service (rpc/service.h: cache, search pool, Planner methods), serves gRPC with the health
 * check, prints where it listens, and runs until SIGTERM or SIGINT.
 *
 * Start-up prints, on stdout, one line per fact and then "ready" (tests and scripts read them):
 *   shardpland: grpc listening on 127.0.0.1:50051
 *   shardpland: dashboard http://127.0.0.1:8080/ (...)
 *   shardpland: plan cache /home/u/.local/state/shardplan/plans.db
 *   shardpland: ready
 * Shutdown: health turns NOT_SERVING, new searches are refused, running searches are asked to
 * stop (each returns its best plan so far, which is stored before it is answered), open calls
 * are answered or cancelled, the cache is flushed and closed.
 *
 * Exit codes: 0 after a clean shutdown (and for --help/--version), 2 for bad settings, 1 when
 * it cannot start (address in use, cache unreadable or of a newer schema).
 *
 * The dashboard (daemon/dashboard.h, web/) serves --http-listen from the same service: it is
 * started before the gRPC server so that every call is counted in /metrics, and stopped first
 * at shutdown.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/daemon_config.h"
#include "daemon/dashboard.h"
#include "rpc/health.h"
#include "rpc/planner_version.h"
#include "rpc/rpc_server.h"
#include "rpc/service.h"

static int mkdir_p(const char *path, sp_err *err) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return sp_err_set(err, SP_EINVAL, "--data-dir: path too long");
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0700) && errno != EEXIST)
      return sp_err_set(err, SP_EIO, "--data-dir: cannot create %s: %s", buf, strerror(errno));
    *p = '/';
  }
  if (mkdir(buf, 0700) && errno != EEXIST)
    return sp_err_set(err, SP_EIO, "--data-dir: cannot create %s: %s", buf, strerror(errno));
  return SP_OK;
}

int main(int argc, char **argv) {
  sp_daemon_config cfg;
  sp_err err;
  sp_err_clear(&err);
  if (sp_daemon_config_parse(argc, argv, NULL, &cfg, &err)) {
    fprintf(stderr, "shardpland: %s\n", err.msg);
    return 2;
  }
  if (cfg.show_help) {
    sp_daemon_config_usage(stdout);
    sp_daemon_config_free(&cfg);
    return 0;
  }
  if (cfg.show_version) {
    printf("shardpland %s (planner %s)\n", SP_PROJECT_VERSION, SP_PLANNER_VERSION);
    sp_daemon_config_free(&cfg);
    return 0;
  }

  /* Signals go to the main thread only (it waits for them below); threads inherit the mask. */
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);
  /* A file size limit (RLIMIT_FSIZE) reached by the plan cache is a write error (EFBIG) that
   * the cache reports like a full disk, not a signal that kills the daemon. */
  signal(SIGXFSZ, SIG_IGN);

  int rc = 1;
  static atomic_int serving = 1;
  sp_service *svc = NULL;
  sp_rpc_server *srv = NULL;
  sp_dashboard *dash = NULL;
  const char *dash_address = NULL;
  if (mkdir_p(cfg.data_dir, &err)) goto fail;

  sp_service_options so;
  sp_service_options_init(&so);
  so.data_dir = cfg.data_dir;
  so.max_searches = cfg.max_searches;
  so.max_queue = cfg.max_queue;
  so.cache_max_bytes = cfg.cache_max_bytes;
  so.default_time_limit = cfg.time_limit;
  so.max_request_memory_bytes = cfg.max_request_memory_bytes;
  so.log_level = (int)cfg.log_level;
  so.log = stderr;
  if (sp_service_open(&so, &svc, &err)) goto fail;

  sp_rpc_server_options ro = {0};
  ro.max_message_bytes = cfg.max_message_bytes;
  ro.token = cfg.token;
  ro.tls_cert_pem = cfg.tls_cert_pem;
  ro.tls_key_pem = cfg.tls_key_pem;
  int port = 0;
  if (cfg.http_listen &&
      sp_dashboard_start(&cfg, svc, SP_PLANNER_VERSION, &dash, &dash_address, &err))
    goto fail;
  if (sp_rpc_server_new(&ro, &srv, &err) || sp_rpc_health_register(srv, &serving, &err) ||
      sp_service_register(svc, srv, &err) ||
      sp_rpc_server_listen(srv, cfg.grpc_listen, &port, &err) ||
      sp_rpc_server_start(srv, &err))
    goto fail;

  /* The address with the bound port (port 0 asked for any free one). */
  char shown[512];
  snprintf(shown, sizeof shown, "%s", cfg.grpc_listen);
  char *colon = strrchr(shown, ':');
  if (strncmp(shown, "unix:", 5) != 0 && colon)
    snprintf(colon + 1, sizeof shown - (size_t)(colon + 1 - shown), "%d", port);
  printf("shardpland: grpc listening on %s%s%s\n", shown, cfg.tls_cert_pem ? " (TLS)" : "",
         cfg.token ? " (bearer token required)" : "");
  if (dash) printf("shardpland: dashboard http://%s/\n", dash_address);
  printf("shardpland: plan cache %s\n", sp_service_cache_path(svc));
  printf("shardpland: planner %s, %d search%s at once, queue %d\n", SP_PLANNER_VERSION,
         cfg.max_searches, cfg.max_searches == 1 ? "" : "es", cfg.max_queue);
  printf("shardpland: ready\n");
  fflush(stdout);

  int sig = 0;
  sigwait(&sigs, &sig);
  fprintf(stderr, "shardpland: %s received, shutting down\n",
          sig == SIGTERM ? "SIGTERM" : "SIGINT");
  atomic_store(&serving, 0);
  sp_dashboard_stop(dash);          /* the dashboard first: it reads the cache */
  dash = NULL;
  sp_service_drain(svc);            /* refuse new searches, stop running ones, answer waiters */
  sp_rpc_server_shutdown(srv);      /* then close the calls and the queues */
  rc = 0;
  fprintf(stderr, "shardpland: stopped\n");
  goto done;
fail:
  fprintf(stderr, "shardpland: %s\n", err.msg);
done:
  if (srv) sp_rpc_server_shutdown(srv);
  sp_dashboard_stop(dash);
  sp_service_close(svc);
  sp_rpc_server_free(srv);
  sp_daemon_config_free(&cfg);
  return rc;
}

/*
 * faults_hook.c - the fault-injection hook of the daemon's test build (shardpland-faults, built
 * by tests/daemon.cmake from the daemon's sources plus this file; shardpland never has it).
 *
 * Before main runs, a constructor reads SHARDPLAN_TEST_FAULTS. When it names a path, it
 * installs the failing allocator and makes the VFS shim of faults.h SQLite's default (so the
 * daemon's plan cache opens through it unchanged), then listens on a Unix socket at that path:
 * a test connects, sends command lines (faults.h: "arm malloc 7", "off", "fired",
 * "fsize 65536") and reads one reply line for each. Without the variable nothing happens.
 *
 * Memory: the listening thread and its socket live until the process exits.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "store/faults.h"

static void serve_client(int fd) {
  char buf[256];
  size_t have = 0;
  for (;;) {
    ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
    if (r <= 0) return;
    have += (size_t)r;
    buf[have] = '\0';
    char *nl;
    while ((nl = strchr(buf, '\n'))) {
      *nl = '\0';
      char reply[128];
      sp_faults_command(buf, reply, sizeof reply - 1);
      strcat(reply, "\n");
      if (write(fd, reply, strlen(reply)) < 0) return;
      have -= (size_t)(nl + 1 - buf);
      memmove(buf, nl + 1, have + 1);
    }
    if (have == sizeof buf - 1) return;   /* a line too long: hang up */
  }
}

static void *serve(void *arg) {
  int lfd = (int)(intptr_t)arg;
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) continue;
    serve_client(fd);
    close(fd);
  }
  return NULL;
}

__attribute__((constructor)) static void faults_hook_start(void) {
  const char *path = getenv("SHARDPLAN_TEST_FAULTS");
  if (!path || !*path) return;
  sp_err err;
  sp_err_clear(&err);
  if (sp_faults_install(true, true, &err)) {
    fprintf(stderr, "shardpland-faults: %s\n", err.msg);
    exit(1);
  }
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof a.sun_path) {
    fprintf(stderr, "shardpland-faults: SHARDPLAN_TEST_FAULTS: path too long\n");
    exit(1);
  }
  strcpy(a.sun_path, path);
  unlink(path);
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  /* The thread blocks every signal: the daemon's main thread sigwaits for SIGTERM, which it
   * blocks only in the threads it starts itself. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_t t;
  int ok = lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 4) == 0 &&
           pthread_create(&t, NULL, serve, (void *)(intptr_t)lfd) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!ok) {
    fprintf(stderr, "shardpland-faults: cannot listen on %s\n", path);
    exit(1);
  }
  pthread_detach(t);
}

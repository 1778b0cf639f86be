/*
 * daemon_config.h - shardpland's settings: command-line flags (getopt_long), each also read
 * from a SHARDPLAN_* environment variable (the flag wins), with validation and the defaults:
 *
 *   --grpc-listen ADDR     SHARDPLAN_GRPC_LISTEN     127.0.0.1:50051 (port 0: any free port;
 *                                                    unix:PATH for a sidecar)
 *   --http-listen H:P      SHARDPLAN_HTTP_LISTEN     127.0.0.1:8080 (the dashboard; "" or
 *                                                    "off": none)
 *   --http-allow-host N    SHARDPLAN_HTTP_ALLOW_HOST  names the dashboard answers to besides
 *                                                    loopback ones (comma separated; behind
 *                                                    a proxy or in a container)
 *   --data-dir DIR         SHARDPLAN_DATA_DIR        $XDG_STATE_HOME/shardplan, else
 *                                                    ~/.local/state/shardplan
 *   --max-searches N       SHARDPLAN_MAX_SEARCHES    the number of cores
 *   --max-queue N          SHARDPLAN_MAX_QUEUE       64 searches waiting for a slot
 *   --cache-max-mb N       SHARDPLAN_CACHE_MAX_MB    1024 (0: no limit)
 *   --max-message-mb N     SHARDPLAN_MAX_MESSAGE_MB  64
 *   --time-limit S         SHARDPLAN_TIME_LIMIT      none (search seconds when a request
 *                                                    gives none; without, the search is
 *                                                    bounded by work, cut only by deadlines)
 *   --log-level L          SHARDPLAN_LOG_LEVEL       info (error, warn, info, debug)
 *   --tls-cert F, --tls-key F  SHARDPLAN_TLS_CERT, SHARDPLAN_TLS_KEY (both or neither)
 *   --token-file F         SHARDPLAN_TOKEN_FILE      bearer token required on every method
 *                                                    but Health; only over loopback or TLS
 *   --version, --help
 *
 * Memory: the strings of a config are malloc'd and freed by sp_daemon_config_free.
 */
#ifndef SP_DAEMON_CONFIG_H
#define SP_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/err.h"

typedef enum sp_log_level { SP_LOG_ERROR = 0, SP_LOG_WARN, SP_LOG_INFO, SP_LOG_DEBUG } sp_log_level;

typedef struct sp_daemon_config {
  char *grpc_listen;
  char *http_listen;      /* NULL: no dashboard */
  char *http_allow_hosts; /* comma-separated Host names besides loopback, or NULL */
  char *data_dir;
  int max_searches;
  int max_queue;
  int64_t cache_max_bytes;
  int64_t max_message_bytes;
  int64_t max_request_memory_bytes; /* default: half the machine's memory / max_searches */
  double time_limit;
  sp_log_level log_level;
  char *tls_cert_pem;     /* file contents */
  char *tls_key_pem;
  char *tls_cert_path, *tls_key_path;
  char *token;            /* file contents, trailing newline removed */
  char *token_path;
  bool show_version, show_help;
} sp_daemon_config;

/* Fills `c` from `env` (getenv when NULL is passed: pass a function for tests) and argv.
 * SP_EINVAL naming the flag (or variable) and the value on a bad setting. */
typedef const char *(*sp_getenv_fn)(const char *name);
int sp_daemon_config_parse(int argc, char **argv, sp_getenv_fn env, sp_daemon_config *c,
                           sp_err *err);
void sp_daemon_config_free(sp_daemon_config *c);
void sp_daemon_config_usage(FILE *out);
/* True when `addr` (a --grpc-listen value) only accepts local connections: loopback
 * addresses, localhost, unix sockets. */
bool sp_daemon_addr_is_local(const char *addr);

#endif /* SP_DAEMON_CONFIG_H */

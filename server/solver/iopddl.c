/*
 * iopddl.c - reader for IOPDDL contest problems (see solver.h).
 *
 * The file is read whole through zlib (gzread passes plain files through unchanged), parsed
 * with cJSON, checked field by field, and turned into a strategy graph with the public
 * sp_sg_add_* calls, so that the graph's own invariants are enforced in one place. Error
 * messages name the JSON path of the offending value.
 */
#include "solver/solver.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ir/file_read.h"
#include "ir/sp_limits.h"

static long gz_read(void *src, char *buf, size_t n) {
  return gzread(src, buf, n > INT_MAX ? INT_MAX : (unsigned)n);
}

/* Reads the whole (possibly gzip-compressed) file into a malloc'd buffer. */
static int read_all(const char *path, char **buf, size_t *len, sp_err *err) {
  *buf = NULL;
  *len = 0;
  gzFile f = gzopen(path, "rb");
  if (!f) return sp_err_set(err, SP_EIO, "cannot open: %s", strerror(errno ? errno : ENOENT));
  int rc = sp_file_read_from(gz_read, f, (size_t)SP_MAX_INPUT_BYTES, buf, len);
  if (rc == SP_ELIMIT) {
    sp_err_set(err, SP_ELIMIT, "more than %ld bytes (SP_MAX_INPUT_BYTES)", (long)SP_MAX_INPUT_BYTES);
  } else if (rc == SP_EIO) {
    int zerr;
    const char *msg = gzerror(f, &zerr);
    sp_err_set(err, SP_EIO, "read error: %s", zerr == Z_ERRNO ? strerror(errno) : msg);
  } else if (rc) {
    sp_err_set(err, SP_ENOMEM, "out of memory reading the file");
  }
  gzclose(f);
  return rc;
}

/* ------------------------------------------------------------------ checked accessors */

/* A JSON path for messages, built on the stack: "problem.nodes.costs[3][1]". */
typedef struct jpath {
  char s[160];
} jpath;

static jpath path_idx(const char *base, int i) {
  jpath p;
  snprintf(p.s, sizeof p.s, "%s[%d]", base, i);
  return p;
}

static jpath path_idx2(const char *base, int i, int j) {
  jpath p;
  snprintf(p.s, sizeof p.s, "%s[%d][%d]", base, i, j);
  return p;
}

static const char *json_kind(const cJSON *v) {
  if (!v) return "missing";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsObject(v)) return "an object";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  return "invalid";
}

static int want_array(const cJSON *v, const char *path, sp_err *err) {
  if (cJSON_IsArray(v)) return SP_OK;
  return sp_err_set(err, SP_EINVAL, "%s is %s, expected an array", path, json_kind(v));
}

static int want_object(const cJSON *v, const char *path, sp_err *err) {
  if (cJSON_IsObject(v)) return SP_OK;
  return sp_err_set(err, SP_EINVAL, "%s is %s, expected an object", path, json_kind(v));
}

/* A non-negative integer that is exact in a double, or (when `forbidden_ok`) 1e18 or more,
 * which becomes SP_SG_FORBIDDEN. */
static int get_count(const cJSON *v, const char *path, bool forbidden_ok, int64_t *out,
                     sp_err *err) {
  if (!cJSON_IsNumber(v))
    return sp_err_set(err, SP_EINVAL, "%s is %s, expected a non-negative integer", path,
                      json_kind(v));
  double d = v->valuedouble;
  if (!isfinite(d) || d != floor(d) || d < 0)
    return sp_err_set(err, SP_EINVAL, "%s is %.17g, expected a non-negative integer", path, d);
  if (forbidden_ok && d >= (double)SP_SG_FORBIDDEN) {
    *out = SP_SG_FORBIDDEN;
    return SP_OK;
  }
  if (d > (double)SP_SG_MAX_EXACT)
    return sp_err_set(err, SP_EINVAL, "%s is %.17g, above 2^53 where JSON numbers are not "
                      "exact%s", path, d, forbidden_ok ? " (and below 1e18, \"forbidden\")" : "");
  *out = (int64_t)d;
  return SP_OK;
}

/* An integer that fits an int (node indices). */
static int get_index(const cJSON *v, const char *path, int64_t *out, sp_err *err) {
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
      fabs(v->valuedouble) > 2e9)
    return sp_err_set(err, SP_EINVAL, "%s is %s, expected a node index", path,
                      cJSON_IsNumber(v) ? "not an integer index" : json_kind(v));
  *out = (int64_t)v->valuedouble;
  return SP_OK;
}

/* Any integer exact in a double (interval times may be negative). */
static int get_time(const cJSON *v, const char *path, int64_t *out, sp_err *err) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
      v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > (double)SP_SG_MAX_EXACT)
    return sp_err_set(err, SP_EINVAL, "%s is %s, expected an integer time", path,
                      cJSON_IsNumber(v) ? "not an exact integer" : json_kind(v));
  *out = (int64_t)v->valuedouble;
  return SP_OK;
}

/* Reads the array `arr` of numbers into `out` (allocated by the caller with `n` slots). */
static int get_numbers(const cJSON *arr, const char *path, bool forbidden_ok, int64_t *out,
                       sp_err *err) {
  int i = 0;
  const cJSON *v;
  cJSON_ArrayForEach(v, arr) {
    jpath p = path_idx(path, i);
    int rc = get_count(v, p.s, forbidden_ok, &out[i], err);
    if (rc != SP_OK) return rc;
    i++;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ the problem */

typedef struct lists {
  const cJSON *intervals, *costs, *usages; /* nodes.* */
  const cJSON *enodes, *ecosts;            /* edges.* */
  int nnodes, nedges;
} lists;

static int find_lists(const cJSON *root, lists *l, const char **name, sp_err *err) {
  int rc = want_object(root, "the top level", err);
  if (rc != SP_OK) return rc;
  const cJSON *pb = cJSON_GetObjectItemCaseSensitive(root, "problem");
  if (!pb) return sp_err_set(err, SP_EINVAL, "no \"problem\" object at the top level");
  if ((rc = want_object(pb, "problem", err)) != SP_OK) return rc;
  const cJSON *nm = cJSON_GetObjectItemCaseSensitive(pb, "name");
  *name = cJSON_IsString(nm) ? nm->valuestring : "";
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(pb, "nodes");
  if ((rc = want_object(nodes, "problem.nodes", err)) != SP_OK) return rc;
  const cJSON *edges = cJSON_GetObjectItemCaseSensitive(pb, "edges");
  l->intervals = cJSON_GetObjectItemCaseSensitive(nodes, "intervals");
  l->costs = cJSON_GetObjectItemCaseSensitive(nodes, "costs");
  l->usages = cJSON_GetObjectItemCaseSensitive(nodes, "usages");
  if ((rc = want_array(l->intervals, "problem.nodes.intervals", err)) != SP_OK) return rc;
  if ((rc = want_array(l->costs, "problem.nodes.costs", err)) != SP_OK) return rc;
  if ((rc = want_array(l->usages, "problem.nodes.usages", err)) != SP_OK) return rc;
  if (edges) {
    if ((rc = want_object(edges, "problem.edges", err)) != SP_OK) return rc;
    l->enodes = cJSON_GetObjectItemCaseSensitive(edges, "nodes");
    l->ecosts = cJSON_GetObjectItemCaseSensitive(edges, "costs");
    if ((rc = want_array(l->enodes, "problem.edges.nodes", err)) != SP_OK) return rc;
    if ((rc = want_array(l->ecosts, "problem.edges.costs", err)) != SP_OK) return rc;
  } else {
    l->enodes = l->ecosts = NULL;
  }
  int nc = cJSON_GetArraySize(l->costs), ni = cJSON_GetArraySize(l->intervals);
  int nu = cJSON_GetArraySize(l->usages);
  if (ni != nc)
    return sp_err_set(err, SP_EINVAL, "problem.nodes.intervals has %d entries but "
                      "problem.nodes.costs has %d", ni, nc);
  if (nu != nc)
    return sp_err_set(err, SP_EINVAL, "problem.nodes.usages has %d entries but "
                      "problem.nodes.costs has %d", nu, nc);
  l->nnodes = nc;
  l->nedges = l->enodes ? cJSON_GetArraySize(l->enodes) : 0;
  if (l->enodes && cJSON_GetArraySize(l->ecosts) != l->nedges)
    return sp_err_set(err, SP_EINVAL, "problem.edges.costs has %d entries but "
                      "problem.edges.nodes has %d", cJSON_GetArraySize(l->ecosts), l->nedges);
  if (l->nnodes > SP_SG_MAX_NODES)
    return sp_err_set(err, SP_ELIMIT, "%d nodes, more than %d (SP_SG_MAX_NODES)", l->nnodes,
                      SP_SG_MAX_NODES);
  return SP_OK;
}

static int read_interval(const cJSON *iv, int i, sp_sg_interval *out, sp_err *err) {
  jpath p = path_idx("problem.nodes.intervals", i);
  if (!cJSON_IsArray(iv) || cJSON_GetArraySize(iv) != 2)
    return sp_err_set(err, SP_EINVAL, "%s is %s, expected [start, end]", p.s,
                      cJSON_IsArray(iv) ? "an array of the wrong length" : json_kind(iv));
  jpath p0 = path_idx2("problem.nodes.intervals", i, 0);
  jpath p1 = path_idx2("problem.nodes.intervals", i, 1);
  int rc = get_time(cJSON_GetArrayItem(iv, 0), p0.s, &out->start, err);
  if (rc == SP_OK) rc = get_time(cJSON_GetArrayItem(iv, 1), p1.s, &out->end, err);
  if (rc != SP_OK) return rc;
  if (out->start > out->end)
    return sp_err_set(err, SP_EINVAL, "%s is [%lld, %lld]: start is after end", p.s,
                      (long long)out->start, (long long)out->end);
  return SP_OK;
}

static int read_nodes(const lists *l, sp_sg *g, sp_err *err) {
  const cJSON *iv = l->intervals ? l->intervals->child : NULL;
  const cJSON *cs = l->costs->child, *us = l->usages->child;
  int64_t *costs = NULL, *usages = NULL;
  int cap = 0, rc = SP_OK;
  for (int i = 0; i < l->nnodes; i++, iv = iv->next, cs = cs->next, us = us->next) {
    jpath pc = path_idx("problem.nodes.costs", i), pu = path_idx("problem.nodes.usages", i);
    if ((rc = want_array(cs, pc.s, err)) != SP_OK) goto done;
    if ((rc = want_array(us, pu.s, err)) != SP_OK) goto done;
    int k = cJSON_GetArraySize(cs);
    if (k == 0) {
      rc = sp_err_set(err, SP_EINVAL, "%s is empty; every node needs a strategy", pc.s);
      goto done;
    }
    if (cJSON_GetArraySize(us) != k) {
      rc = sp_err_set(err, SP_EINVAL, "%s has %d entries but %s has %d", pu.s,
                      cJSON_GetArraySize(us), pc.s, k);
      goto done;
    }
    if (k > cap) {
      free(costs);
      free(usages);
      cap = k;
      costs = malloc(sizeof(int64_t) * (size_t)k);
      usages = malloc(sizeof(int64_t) * (size_t)k);
      if (!costs || !usages) { rc = sp_err_set(err, SP_ENOMEM, "out of memory"); goto done; }
    }
    sp_sg_interval live;
    if ((rc = read_interval(iv, i, &live, err)) != SP_OK) goto done;
    if ((rc = get_numbers(cs, pc.s, true, costs, err)) != SP_OK) goto done;
    if ((rc = get_numbers(us, pu.s, false, usages, err)) != SP_OK) goto done;
    rc = sp_sg_add_node(g, k, costs, usages, live, err);
    if (rc < 0) {
      sp_err_prefix(err, "problem.nodes");
      goto done;
    }
    rc = SP_OK;
  }
done:
  free(costs);
  free(usages);
  return rc;
}

static int read_edges(const lists *l, sp_sg *g, sp_err *err) {
  if (!l->enodes) return SP_OK;
  const cJSON *en = l->enodes->child, *ec = l->ecosts->child;
  int64_t *costs = NULL;
  int64_t cap = 0;
  int rc = SP_OK;
  for (int e = 0; e < l->nedges; e++, en = en->next, ec = ec->next) {
    jpath pn = path_idx("problem.edges.nodes", e), pc = path_idx("problem.edges.costs", e);
    if (!cJSON_IsArray(en) || cJSON_GetArraySize(en) != 2) {
      rc = sp_err_set(err, SP_EINVAL, "%s is %s, expected [a, b]", pn.s,
                      cJSON_IsArray(en) ? "an array of the wrong length" : json_kind(en));
      goto done;
    }
    int64_t ab[2];
    for (int j = 0; j < 2; j++) {
      jpath pj = path_idx2("problem.edges.nodes", e, j);
      if ((rc = get_index(cJSON_GetArrayItem(en, j), pj.s, &ab[j], err)) != SP_OK) goto done;
      if (ab[j] < 0 || ab[j] >= g->nnodes) {
        rc = sp_err_set(err, SP_EINVAL, "%s is %lld, but there are %d nodes", pj.s,
                        (long long)ab[j], g->nnodes);
        goto done;
      }
    }
    if (ab[0] == ab[1]) {
      rc = sp_err_set(err, SP_EINVAL, "%s joins node %lld to itself", pn.s, (long long)ab[0]);
      goto done;
    }
    if ((rc = want_array(ec, pc.s, err)) != SP_OK) goto done;
    int ka = g->nodes[ab[0]].nstrat, kb = g->nodes[ab[1]].nstrat;
    int64_t want = (int64_t)ka * kb;
    if (cJSON_GetArraySize(ec) != want) {
      rc = sp_err_set(err, SP_EINVAL, "%s has %d entries, expected %dx%d=%lld (strategies of "
                      "nodes %lld and %lld)", pc.s, cJSON_GetArraySize(ec), ka, kb,
                      (long long)want, (long long)ab[0], (long long)ab[1]);
      goto done;
    }
    if (want > cap) {
      free(costs);
      cap = want;
      costs = malloc(sizeof(int64_t) * (size_t)want);
      if (!costs) { rc = sp_err_set(err, SP_ENOMEM, "out of memory"); goto done; }
    }
    if ((rc = get_numbers(ec, pc.s, true, costs, err)) != SP_OK) goto done;
    rc = sp_sg_add_edge(g, (int)ab[0], (int)ab[1], costs, err);
    if (rc < 0) {
      sp_err_prefix(err, "problem.edges");
      goto done;
    }
    rc = SP_OK;
  }
done:
  free(costs);
  return rc;
}

/* Line and column (1-based) of byte `off` of `text`. */
static void line_col(const char *text, size_t off, int *line, int *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

int sp_iopddl_parse(const char *text, size_t len, sp_sg **out, sp_err *err) {
  *out = NULL;
  if (len > (size_t)SP_MAX_INPUT_BYTES)
    return sp_err_set(err, SP_ELIMIT, "%zu bytes, more than %ld (SP_MAX_INPUT_BYTES)", len,
                      (long)SP_MAX_INPUT_BYTES);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
    int line, col;
    line_col(text, off, &line, &col);
    return sp_err_set(err, SP_EINVAL, "malformed JSON at line %d, column %d", line, col);
  }
  lists l = {0};
  const char *name = "";
  sp_sg *g = NULL;
  int rc = find_lists(root, &l, &name, err);
  if (rc != SP_OK) goto fail;
  g = sp_sg_new(name);
  if (!g) { rc = sp_err_set(err, SP_ENOMEM, "out of memory"); goto fail; }
  if ((rc = read_nodes(&l, g, err)) != SP_OK) goto fail;
  if ((rc = read_edges(&l, g, err)) != SP_OK) goto fail;
  const cJSON *pb = cJSON_GetObjectItemCaseSensitive(root, "problem");
  const cJSON *lim = cJSON_GetObjectItemCaseSensitive(pb, "usage_limit");
  if (lim && !cJSON_IsNull(lim)) {
    int64_t v = 0;
    if ((rc = get_count(lim, "problem.usage_limit", false, &v, err)) != SP_OK) goto fail;
    if ((rc = sp_sg_set_usage_limit(g, v, err)) != SP_OK) goto fail;
  }
  cJSON_Delete(root);
  *out = g;
  return SP_OK;
fail:
  cJSON_Delete(root);
  sp_sg_free(g);
  return rc;
}

int sp_iopddl_read_file(const char *path, sp_sg **out, sp_err *err) {
  char *buf;
  size_t len;
  *out = NULL;
  int rc = read_all(path, &buf, &len, err);
  if (rc == SP_OK) {
    rc = sp_iopddl_parse(buf, len, out, err);
    free(buf);
  }
  if (rc != SP_OK) sp_err_prefix(err, "%s", path);
  return rc;
}

/* ------------------------------------------------------------------ writing */

static void put_number(gzFile f, int64_t v) {
  if (v >= SP_SG_FORBIDDEN) gzputs(f, "1000000000000000000");
  else gzprintf(f, "%lld", (long long)v);
}

static void put_list(gzFile f, const int64_t *v, int64_t n) {
  gzputc(f, '[');
  for (int64_t i = 0; i < n; i++) {
    if (i) gzputc(f, ',');
    put_number(f, v[i]);
  }
  gzputc(f, ']');
}

/* Writes the nodes' lists, one node per line: "intervals", "costs" or "usages". */
static void put_node_lists(gzFile f, const sp_sg *g, int which) {
  for (int i = 0; i < g->nnodes; i++) {
    const sp_sg_node *n = &g->nodes[i];
    gzputs(f, i ? ",\n   " : "\n   ");
    if (which == 0)
      gzprintf(f, "[%lld,%lld]", (long long)n->live.start, (long long)n->live.end);
    else
      put_list(f, which == 1 ? n->costs : n->usages, n->nstrat);
  }
}

int sp_iopddl_write_file(const sp_sg *g, const char *path, sp_err *err) {
  size_t len = strlen(path);
  bool gz = len >= 3 && strcmp(path + len - 3, ".gz") == 0;
  char *name = NULL;
  cJSON *js = cJSON_CreateString(g->name ? g->name : "");
  if (js) name = cJSON_PrintUnformatted(js); /* the name, quoted and escaped */
  cJSON_Delete(js);
  if (!name) return sp_err_set(err, SP_ENOMEM, "out of memory");
  gzFile f = gzopen(path, gz ? "wb6" : "wbT");
  if (!f) {
    free(name);
    return sp_err_set(err, SP_EIO, "%s: cannot create: %s", path,
                      strerror(errno ? errno : EACCES));
  }
  gzprintf(f, "{\"problem\": {\"name\": %s,\n \"nodes\": {\"intervals\": [", name);
  free(name);
  put_node_lists(f, g, 0);
  gzputs(f, "],\n  \"costs\": [");
  put_node_lists(f, g, 1);
  gzputs(f, "],\n  \"usages\": [");
  put_node_lists(f, g, 2);
  gzputs(f, "]},\n \"edges\": {\"nodes\": [");
  for (int e = 0; e < g->nedges; e++)
    gzprintf(f, "%s[%d,%d]", e ? "," : "", g->edges[e].a, g->edges[e].b);
  gzputs(f, "],\n  \"costs\": [");
  for (int e = 0; e < g->nedges; e++) {
    const sp_sg_edge *ed = &g->edges[e];
    gzputs(f, e ? ",\n   " : "\n   ");
    put_list(f, ed->costs, (int64_t)g->nodes[ed->a].nstrat * g->nodes[ed->b].nstrat);
  }
  gzputs(f, "]}");
  if (g->usage_limit != SP_SG_NO_LIMIT)
    gzprintf(f, ",\n \"usage_limit\": %lld", (long long)g->usage_limit);
  gzputs(f, "}}\n");
  int zerr = Z_OK;
  gzerror(f, &zerr);
  int crc = gzclose(f);
  if (zerr != Z_OK || crc != Z_OK)
    return sp_err_set(err, SP_EIO, "%s: write failed", path);
  return SP_OK;
}

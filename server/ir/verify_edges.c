/*
 * verify_edges.c - the checks of propagation's debugging attributes on an op (see verify.h):
 * `sdy.propagation_edges` (one #sdy.propagation_edges<...>) and
 * `sdy.result_propagation_edges` / `sdy.block_arg_propagation_edges` (a list of them), as
 * Shardy's verifier words them.
 *
 * The attributes are kept as verbatim text by the reader; here the text is read with the
 * grammar Shardy prints:
 *   #sdy.propagation_edges<[{step-N = [{"axis":(pre)size = operand-I -> [result-J, ...]}, ...]},
 *                           ...]>
 * and checked: step indices non-negative and distinct; each axis names an axis of a mesh one
 * of the op's operand or result shardings uses; a source is not among its targets and no
 * target repeats; operand / result indices in range (not for data-flow edge ops, whose
 * operands are their sources).
 *
 * Memory: nothing allocated; steps are checked against a bounded table on the stack.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "ir/verify.h"

#define MAX_STEPS 256
#define MAX_TARGETS 64
#define MAX_MESHES 8
#define MAX_NAME 128

static const char EDGES[] = "#sdy.propagation_edges<";

typedef struct cursor {
  const char *p;
} cursor;

static void skip_ws(cursor *c) {
  while (isspace((unsigned char)*c->p)) c->p++;
}

static bool eat(cursor *c, const char *word) {
  skip_ws(c);
  size_t n = strlen(word);
  if (strncmp(c->p, word, n) != 0) return false;
  c->p += n;
  return true;
}

static bool read_int(cursor *c, long long *out) {
  skip_ws(c);
  char *end;
  long long v = strtoll(c->p, &end, 10);
  if (end == c->p) return false;
  c->p = end;
  *out = v;
  return true;
}

typedef struct end_ref {
  bool result;
  long long index;
} end_ref;

static bool read_end(cursor *c, end_ref *e) {
  if (eat(c, "operand-")) e->result = false;
  else if (eat(c, "result-")) e->result = true;
  else return false;
  /* The index follows the dash directly. */
  char *end;
  e->index = strtoll(c->p, &end, 10);
  if (end == c->p) return false;
  c->p = end;
  return true;
}

typedef struct axis_text {
  char name[MAX_NAME + 1];
  bool sub;
  long long pre, size;
} axis_text;

static bool read_axis(cursor *c, axis_text *a) {
  if (!eat(c, "\"")) return false;
  const char *q = strchr(c->p, '"');
  if (!q || (size_t)(q - c->p) > MAX_NAME) return false;
  memcpy(a->name, c->p, (size_t)(q - c->p));
  a->name[q - c->p] = '\0';
  c->p = q + 1;
  a->sub = false;
  if (*c->p == ':') {
    c->p++;
    a->sub = true;
    if (!eat(c, "(") || !read_int(c, &a->pre) || !eat(c, ")") || !read_int(c, &a->size))
      return false;
  }
  return true;
}

/* The meshes of the op's operand and result shardings (at most MAX_MESHES). */
static int op_meshes(const sp_module *m, const sp_op *op, const sp_mesh **out) {
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    int cnt = pass ? op->noperands : op->nresults;
    for (int i = 0; i < cnt && n < MAX_MESHES; i++) {
      const sp_value *v = pass ? op->operands[i].value : &op->results[i];
      const sp_mesh *mesh = v && v->sharding ? sp_module_sharding_mesh(m, v->sharding) : NULL;
      bool seen = !mesh;
      for (int k = 0; k < n && !seen; k++) seen = out[k] == mesh;
      if (!seen) out[n++] = mesh;
    }
  }
  return n;
}

static bool in_meshes(const sp_mesh *const *meshes, int n, const axis_text *a) {
  for (int i = 0; i < n; i++) {
    int64_t size = sp_mesh_axis_size(meshes[i], a->name);
    if (size <= 0) continue;
    if (!a->sub) return true;
    if (a->pre >= 1 && a->size > 1 && size % (a->pre * a->size) == 0) return true;
  }
  return false;
}

static bool same_end(const end_ref *x, const end_ref *y) {
  return x->result == y->result && x->index == y->index;
}

typedef struct checker {
  const sp_module *m;
  const sp_op *op;
  sp_err *err;
  const sp_mesh *meshes[MAX_MESHES];
  int nmeshes;
  bool indexed;             /* operand / result indices are the op's own */
} checker;

static int check_index(checker *k, const end_ref *e) {
  if (!k->indexed) return SP_OK;
  int n = e->result ? k->op->nresults : k->op->noperands;
  if (e->index >= 0 && e->index < n) return SP_OK;
  return sp__verify_op_fail(k->m, k->op, k->err,
                            "expected a value ref to have %s index in range [0, %d), got: %lld",
                            e->result ? "a result" : "an operand", n, e->index);
}

/* {"axis" = source -> [targets]} */
static int check_entry(checker *k, cursor *c, long long step, bool *bad) {
  axis_text a;
  end_ref src, tgt[MAX_TARGETS];
  int nt = 0;
  if (!eat(c, "{") || !read_axis(c, &a) || !eat(c, "=") || !read_end(c, &src) || !eat(c, "->") ||
      !eat(c, "[")) {
    *bad = true;
    return SP_OK;
  }
  do {
    if (nt == MAX_TARGETS || !read_end(c, &tgt[nt])) {
      *bad = true;
      return SP_OK;
    }
    nt++;
  } while (eat(c, ","));
  if (!eat(c, "]") || !eat(c, "}")) {
    *bad = true;
    return SP_OK;
  }
  if (!k->nmeshes)
    return sp__verify_op_fail(k->m, k->op, k->err,
                              "expected propagation edges attr to reference a sharding");
  if (!in_meshes(k->meshes, k->nmeshes, &a))
    return sp__verify_op_fail(k->m, k->op, k->err, "expected axis ref to be in one of the meshes");
  for (int i = 0; i < nt; i++) {
    if (same_end(&src, &tgt[i]))
      return sp__verify_op_fail(k->m, k->op, k->err,
                                "propagation edges have a source that is the same as a target");
    for (int j = 0; j < i; j++)
      if (same_end(&tgt[i], &tgt[j])) {
        if (a.sub)
          return sp__verify_op_fail(k->m, k->op, k->err,
                                    "propagation edges have duplicate targets for step index: "
                                    "%lld and axis: %s:(%lld)%lld", step, a.name, a.pre, a.size);
        return sp__verify_op_fail(k->m, k->op, k->err,
                                  "propagation edges have duplicate targets for step index: %lld "
                                  "and axis: %s", step, a.name);
      }
  }
  int rc = check_index(k, &src);
  for (int i = 0; i < nt && !rc; i++) rc = check_index(k, &tgt[i]);
  return rc;
}

/* One #sdy.propagation_edges<[...]> at the cursor; *bad when it is not one. */
static int check_edges(checker *k, cursor *c, bool *bad) {
  long long steps[MAX_STEPS];
  int nsteps = 0;
  if (!eat(c, EDGES) || !eat(c, "[")) {
    *bad = true;
    return SP_OK;
  }
  if (eat(c, "]")) return eat(c, ">") ? SP_OK : (*bad = true, SP_OK);
  do {
    long long step;
    if (!eat(c, "{") || !eat(c, "step-") || !read_int(c, &step) || !eat(c, "=") || !eat(c, "[")) {
      *bad = true;
      return SP_OK;
    }
    if (step < 0)
      return sp__verify_op_fail(k->m, k->op, k->err,
                                "propagation edges have negative step index: %lld", step);
    for (int i = 0; i < nsteps; i++)
      if (steps[i] == step)
        return sp__verify_op_fail(k->m, k->op, k->err,
                                  "propagation edges have duplicate step index: %lld", step);
    if (nsteps < MAX_STEPS) steps[nsteps++] = step;
    if (!eat(c, "]")) {
      do {
        int rc = check_entry(k, c, step, bad);
        if (rc || *bad) return rc;
      } while (eat(c, ","));
      if (!eat(c, "]")) {
        *bad = true;
        return SP_OK;
      }
    }
    if (!eat(c, "}")) {
      *bad = true;
      return SP_OK;
    }
  } while (eat(c, ","));
  if (!eat(c, "]") || !eat(c, ">")) *bad = true;
  return SP_OK;
}

static int check_attr(checker *k, const sp_attr *at, bool list) {
  static const char one[] = "should have a propagation edges attribute of type "
                            "PropagationEdgesAttr for attr named 'sdy.propagation_edges'";
  static const char many[] = "should have a propagation edges attribute of type "
                             "ArrayAttr<PropagationEdgesAttr> for attr named "
                             "'sdy.result_propagation_edges' or 'sdy.block_arg_propagation_edges'";
  bool bad = at->kind != SP_ATTR_TEXT;
  cursor c = {bad ? "" : at->u.s};
  int rc = SP_OK;
  if (!bad && list) {
    bad = !eat(&c, "[");
    if (!bad && !eat(&c, "]")) {
      do rc = check_edges(k, &c, &bad);
      while (!rc && !bad && eat(&c, ","));
      bad = bad || (!rc && !eat(&c, "]"));
    }
  } else if (!bad) {
    rc = check_edges(k, &c, &bad);
  }
  skip_ws(&c);
  if (!rc && !bad && *c.p) bad = true;
  if (rc || !bad) return rc;
  return sp__verify_op_fail(k->m, k->op, k->err, "%s", list ? many : one);
}

int sp_verify_edge_attrs(const sp_module *m, const sp_op *op, sp_err *err) {
  checker k = {m, op, err, {NULL}, 0, true};
  k.indexed = op->kind != SP_OP_SDY_DATA_FLOW_EDGE && op->kind != SP_OP_SDY_FUNC_DATA_FLOW_EDGE;
  bool meshes_known = false;
  for (int i = 0; i < op->attrs.n; i++) {
    const sp_attr *at = &op->attrs.v[i];
    bool one = strcmp(at->name, "sdy.propagation_edges") == 0;
    bool list = strcmp(at->name, "sdy.result_propagation_edges") == 0 ||
                strcmp(at->name, "sdy.block_arg_propagation_edges") == 0;
    if (!one && !list) continue;
    if (!meshes_known) {
      k.nmeshes = op_meshes(m, op, k.meshes);
      meshes_known = true;
    }
    int rc = check_attr(&k, at, list);
    if (rc) return rc;
  }
  return SP_OK;
}

/*
 * sharding_forms.c - a sharding as a JAX PartitionSpec and as an XLA GSPMD HloSharding string
 * (see sharding_forms.h).
 *
 * GSPMD: the mesh's devices form an array whose dimensions are the mesh axes, each split into
 * the pieces the sharding's sub-axes mark ("x":(2)4 of an axis of 8 is the second piece of
 * 1|2|4|8 boundaries). The tile assignment is that array transposed so that the pieces each
 * tensor dimension uses come first, in dimension order (major to minor within a dimension),
 * then the unused pieces (replication, in mesh order), and reshaped to the tile dimensions
 * plus one replication dimension when it is larger than 1. Printed as XLA prints it: the iota
 * form `<=[dims]T(perm)` for meshes without device ids (size-1 pieces dropped, pieces that
 * stay adjacent merged, `<=[N]` when no transpose is left), the explicit device list
 * otherwise.
 */
#include "plan/sharding_forms.h"

#include <stdbool.h>
#include <string.h>

#define MAX_PIECES 64

typedef struct piece {
  int axis;        /* mesh axis */
  int64_t pre;     /* product of the sizes of the more major pieces of the axis */
  int64_t size;
} piece;

static void put_axis_name(sp_strbuf *sb, const sp_axis_ref *r) {
  if (r->size) sp_strbuf_printf(sb, "'%s:(%lld)%lld'", r->name, (long long)r->pre, (long long)r->size);
  else sp_strbuf_printf(sb, "'%s'", r->name);
}

void sp_plan_pspec(sp_strbuf *sb, const sp_sharding *s) {
  sp_strbuf_puts(sb, "PartitionSpec(");
  for (int d = 0; s && d < s->rank; d++) {
    const sp_dim_sharding *dim = &s->dims[d];
    if (d) sp_strbuf_puts(sb, ", ");
    if (dim->naxes == 0) {
      sp_strbuf_puts(sb, dim->closed ? "None" : "PartitionSpec.UNCONSTRAINED");
    } else if (dim->naxes == 1) {
      put_axis_name(sb, &dim->axes[0]);
    } else {
      sp_strbuf_putc(sb, '(');
      for (int k = 0; k < dim->naxes; k++) {
        if (k) sp_strbuf_puts(sb, ", ");
        put_axis_name(sb, &dim->axes[k]);
      }
      sp_strbuf_putc(sb, ')');
    }
  }
  if (s && s->nunreduced) {
    sp_strbuf_puts(sb, s->rank ? ", unreduced={" : "unreduced={");
    for (int k = 0; k < s->nunreduced; k++) {
      if (k) sp_strbuf_puts(sb, ", ");
      put_axis_name(sb, &s->unreduced[k]);
    }
    sp_strbuf_putc(sb, '}');
  }
  sp_strbuf_putc(sb, ')');
}

static int axis_index(const sp_mesh *mesh, const char *name) {
  for (int i = 0; i < mesh->naxes; i++)
    if (strcmp(mesh->axes[i].name, name) == 0) return i;
  return -1;
}

/* Adds the boundaries of `r` to the axis' sorted boundary list. */
static bool add_bounds(int64_t *b, int *nb, int64_t pre, int64_t end) {
  int64_t v[2] = {pre, end};
  for (int k = 0; k < 2; k++) {
    int i = 0;
    while (i < *nb && b[i] < v[k]) i++;
    if (i < *nb && b[i] == v[k]) continue;
    if (*nb >= MAX_PIECES) return false;
    memmove(b + i + 1, b + i, (size_t)(*nb - i) * sizeof *b);
    b[i] = v[k];
    (*nb)++;
  }
  return true;
}

int sp_plan_gspmd(sp_strbuf *sb, const sp_sharding *s, const sp_mesh *mesh) {
  if (!mesh) return SP_EINVAL;
  int64_t ndev = sp_mesh_num_devices(mesh);
  if (mesh->naxes == 0) {
    if (mesh->ndevice_ids == 1) sp_strbuf_printf(sb, "{maximal device=%lld}", (long long)mesh->device_ids[0]);
    else sp_strbuf_puts(sb, "{replicated}");
    return SP_OK;
  }
  if (mesh->naxes > MAX_PIECES) return SP_ELIMIT;
  /* Boundaries per axis: 1, the sub-axes' pre and pre*size, the axis size. */
  int64_t bounds[MAX_PIECES][MAX_PIECES];
  int nb[MAX_PIECES];
  for (int a = 0; a < mesh->naxes; a++) {
    nb[a] = 0;
    if (!add_bounds(bounds[a], &nb[a], 1, mesh->axes[a].size)) return SP_ELIMIT;
  }
  int rank = s ? s->rank : 0;
  for (int d = 0; d < rank; d++)
    for (int k = 0; k < s->dims[d].naxes; k++) {
      const sp_axis_ref *r = &s->dims[d].axes[k];
      int a = axis_index(mesh, r->name);
      if (a < 0) return SP_EINVAL;
      if (r->size && !add_bounds(bounds[a], &nb[a], r->pre, r->pre * r->size)) return SP_ELIMIT;
    }
  /* The pieces, major to minor. */
  piece pc[MAX_PIECES];
  int np = 0;
  for (int a = 0; a < mesh->naxes; a++)
    for (int i = 0; i + 1 < nb[a]; i++) {
      if (np >= MAX_PIECES) return SP_ELIMIT;
      pc[np++] = (piece){a, bounds[a][i], bounds[a][i + 1] / bounds[a][i]};
    }
  /* The order: each dim's pieces, then the unused ones. */
  int perm[MAX_PIECES], nperm = 0;
  bool used[MAX_PIECES] = {false};
  int64_t tile[SP_PLAN_MAX_RANK];
  if (rank > SP_PLAN_MAX_RANK) return SP_ELIMIT;
  bool sharded = false;
  for (int d = 0; d < rank; d++) {
    tile[d] = 1;
    for (int k = 0; k < s->dims[d].naxes; k++) {
      const sp_axis_ref *r = &s->dims[d].axes[k];
      int a = axis_index(mesh, r->name);
      int64_t lo = r->size ? r->pre : 1, hi = r->size ? r->pre * r->size : mesh->axes[a].size;
      for (int p = 0; p < np; p++)
        if (pc[p].axis == a && pc[p].pre >= lo && pc[p].pre * pc[p].size <= hi && !used[p]) {
          used[p] = true;
          perm[nperm++] = p;
          tile[d] *= pc[p].size;
        }
    }
    if (tile[d] > 1) sharded = true;
  }
  if (!sharded) {
    sp_strbuf_puts(sb, "{replicated}");
    return SP_OK;
  }
  int64_t repl = 1;
  for (int p = 0; p < np; p++)
    if (!used[p]) {
      perm[nperm++] = p;
      repl *= pc[p].size;
    }
  sp_strbuf_puts(sb, "{devices=[");
  for (int d = 0; d < rank; d++) sp_strbuf_printf(sb, "%s%lld", d ? "," : "", (long long)tile[d]);
  if (repl > 1) sp_strbuf_printf(sb, ",%lld", (long long)repl);
  sp_strbuf_putc(sb, ']');
  if (mesh->ndevice_ids > 0) {
    /* Explicit list: walk the transposed array in row-major order. */
    int64_t idx[MAX_PIECES] = {0};
    int64_t stride[MAX_PIECES];
    int64_t st = 1;
    for (int p = np - 1; p >= 0; p--) {
      stride[p] = st;
      st *= pc[p].size;
    }
    for (int64_t n = 0; n < ndev; n++) {
      int64_t off = 0;
      for (int q = 0; q < nperm; q++) off += idx[q] * stride[perm[q]];
      sp_strbuf_printf(sb, "%s%lld", n ? "," : "",
                       (long long)(off < mesh->ndevice_ids ? mesh->device_ids[off] : off));
      for (int q = nperm - 1; q >= 0; q--) {
        if (++idx[q] < pc[perm[q]].size) break;
        idx[q] = 0;
      }
    }
  } else {
    /* Iota form: drop size-1 pieces, merge runs that stay adjacent. */
    int keep[MAX_PIECES], nk = 0;
    for (int q = 0; q < nperm; q++)
      if (pc[perm[q]].size > 1) keep[nk++] = perm[q];
    int gstart[MAX_PIECES], ng = 0;  /* groups as runs of keep[] */
    int64_t gsize[MAX_PIECES];
    for (int q = 0; q < nk; q++) {
      bool join = q > 0 && keep[q] == keep[q - 1] + 1;
      if (!join) {
        gstart[ng] = keep[q];
        gsize[ng++] = 1;
      }
      gsize[ng - 1] *= pc[keep[q]].size;
    }
    if (ng <= 1) {
      sp_strbuf_printf(sb, "<=[%lld]", (long long)ndev);
    } else {
      /* Reshape dims: the groups in piece order; the transpose: their order in keep[]. */
      int order[MAX_PIECES];
      for (int g = 0; g < ng; g++) order[g] = g;
      for (int i = 1; i < ng; i++)
        for (int j = i; j > 0 && gstart[order[j - 1]] > gstart[order[j]]; j--) {
          int t = order[j];
          order[j] = order[j - 1];
          order[j - 1] = t;
        }
      sp_strbuf_puts(sb, "<=[");
      for (int i = 0; i < ng; i++) sp_strbuf_printf(sb, "%s%lld", i ? "," : "", (long long)gsize[order[i]]);
      sp_strbuf_puts(sb, "]T(");
      for (int g = 0; g < ng; g++) {
        int rankpos = 0;
        while (order[rankpos] != g) rankpos++;
        sp_strbuf_printf(sb, "%s%d", g ? "," : "", rankpos);
      }
      sp_strbuf_putc(sb, ')');
    }
  }
  if (repl > 1) sp_strbuf_puts(sb, " last_tile_dim_replicate");
  sp_strbuf_putc(sb, '}');
  return SP_OK;
}

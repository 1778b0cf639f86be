/*
 * pass_options.c - the tokenizer of pass option strings (see pass_options.h).
 */
#include "ir/pass_options.h"
#include "ir/err.h"

#include <string.h>

static bool is_separator(char c) { return c == ' ' || c == ',' || c == '\t'; }
static bool is_space(char c) { return c == ' ' || c == '\t'; }

const char *sp_options_begin(const char *text) {
  const char *p = text ? text : "";
  return *p == '{' ? p + 1 : p; /* MLIR's `{a=1 b=2}` pipeline form */
}

/* words: -shardplan-search's form (see sp_options_next_word). */
static bool next_item(const char **cursor, sp_option_item *out, bool words) {
  const char *p = *cursor;
  while (words ? is_space(*p) : is_separator(*p)) p++;
  if (!*p || (!words && *p == '}')) {
    *cursor = p;
    return false;
  }
  out->key = p;
  while (*p && *p != '=' && (words ? !is_space(*p) : !is_separator(*p) && *p != '}')) p++;
  out->key_len = (size_t)(p - out->key);
  out->value = p;
  out->value_len = 0;
  out->has_value = *p == '=';
  if (*p == '=' && words) {
    out->value = ++p;
    while (*p && !is_space(*p)) p++;
    out->value_len = (size_t)(p - out->value);
  } else if (*p == '=') {
    out->value = ++p;
    char quote = (*p == '"' || *p == '\'') ? *p : 0;
    if (quote) {
      out->value = ++p;
      while (*p && *p != quote) p++;
      out->value_len = (size_t)(p - out->value);
      if (*p) p++;
    } else {
      while (*p && *p != ' ' && *p != ',' && *p != '}') p++;
      out->value_len = (size_t)(p - out->value);
    }
  }
  *cursor = p;
  return true;
}

bool sp_options_next(const char **cursor, sp_option_item *out) {
  return next_item(cursor, out, false);
}

bool sp_options_next_word(const char **cursor, sp_option_item *out) {
  return next_item(cursor, out, true);
}

bool sp_option_is(const sp_option_item *it, const char *name) {
  return strlen(name) == it->key_len && memcmp(name, it->key, it->key_len) == 0;
}

int sp_option_bool(const char *pass, const sp_option_item *it, bool *out, sp_err *err) {
  const char *v = it->value;
  size_t vn = it->value_len;
  if (vn == 0 || (vn == 4 && memcmp(v, "true", 4) == 0) || (vn == 1 && v[0] == '1'))
    *out = true;
  else if ((vn == 5 && memcmp(v, "false", 5) == 0) || (vn == 1 && v[0] == '0'))
    *out = false;
  else
    return sp_err_set(err, SP_EINVAL, "-%s: option %.*s expects true or false, not '%.*s'", pass,
                      (int)it->key_len, it->key, (int)vn, v);
  return SP_OK;
}

int sp_options_parse_bools(const char *pass, const char *text, const char *const *keys,
                           bool *const *outs, int n, sp_err *err) {
  const char *p = sp_options_begin(text);
  sp_option_item it;
  while (sp_options_next(&p, &it)) {
    int k = 0;
    while (k < n && !sp_option_is(&it, keys[k])) k++;
    if (k == n)
      return sp_err_set(err, SP_EINVAL, "-%s: unknown option '%.*s'", pass, (int)it.key_len, it.key);
    int rc = sp_option_bool(pass, &it, outs[k], err);
    if (rc) return rc;
  }
  return SP_OK;
}

/*
 * pass_options.c - the tokenizer of pass option strings (see pass_options.h).
 */
#include "ir/pass_options.h"

static bool is_separator(char c) { return c == ' ' || c == ',' || c == '\t'; }

const char *sp_options_begin(const char *text) {
  const char *p = text ? text : "";
  return *p == '{' ? p + 1 : p; /* MLIR's `{a=1 b=2}` pipeline form */
}

bool sp_options_next(const char **cursor, sp_option_item *out) {
  const char *p = *cursor;
  while (is_separator(*p)) p++;
  if (!*p || *p == '}') {
    *cursor = p;
    return false;
  }
  out->key = p;
  while (*p && *p != '=' && !is_separator(*p) && *p != '}') p++;
  out->key_len = (size_t)(p - out->key);
  out->value = p;
  out->value_len = 0;
  if (*p == '=') {
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

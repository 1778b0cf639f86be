/*
 * pass_options.h - the tokenizer of pass option strings.
 *
 * A pass flag may carry options after '=': `-sdy-basic-propagate="conservative-propagation=true
 * keep-sharding-rules=true"`, or MLIR's pipeline form `{a=1,b=2}`. Items are `key` or
 * `key=value`, separated by spaces, tabs or commas; a value may be quoted with ' or ". This
 * module only splits the text; each pass decides what its keys mean.
 *
 * Pure, no allocation: items point into the caller's text.
 */
#ifndef SP_PASS_OPTIONS_H
#define SP_PASS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sp_option_item {
  const char *key;
  size_t key_len;
  const char *value;   /* points into the text; value_len 0 when the item has no '=' */
  size_t value_len;
  bool has_value;      /* the item has an '=' */
} sp_option_item;

/* The cursor to start from: `text` (NULL means no options) past an opening '{'. */
const char *sp_options_begin(const char *text);
/* Reads the next item at *cursor and advances it; false at the end of the options. */
bool sp_options_next(const char **cursor, sp_option_item *out);
/* The same for option text whose items are separated by spaces and tabs only and whose values
 * run to the next space or tab (commas, quotes, braces and '=' are part of them): the form of
 * -shardplan-search's options, whose values are lists ("devices=0,1,2,3"). Start at the text
 * itself (no sp_options_begin); the cursor stops at the separator after a value. */
bool sp_options_next_word(const char **cursor, sp_option_item *out);

/* Whether the item's key is `name`. */
bool sp_option_is(const sp_option_item *it, const char *name);
/* The item's value as a boolean into *out (a bare key means true; true/false/1/0), or an
 * error "-PASS: option KEY expects true or false, not 'VALUE'". */
struct sp_err;
int sp_option_bool(const char *pass, const sp_option_item *it, bool *out, struct sp_err *err);

/* Parses boolean options of pass `pass` (for messages, without the dash): the item named
 * `keys[i]` sets `*outs[i]` (n entries; a bare key means true; values true/false/1/0). An
 * unknown key or value is an error naming it. */
int sp_options_parse_bools(const char *pass, const char *text, const char *const *keys,
                           bool *const *outs, int n, struct sp_err *err);

#endif /* SP_PASS_OPTIONS_H */

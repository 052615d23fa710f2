/* JSON text as lua/evalua/core/json.lua writes it, shared by the encoder
 * (l_json.c) and the report writers (l_report.c). */
#ifndef EVALUA_L_JSON_H
#define EVALUA_L_JSON_H

#include <stddef.h>

#include <lua.h>

typedef void (*evalua_put_fn)(void *ud, const char *s, size_t n);

/* s as a JSON string: control bytes and DEL as \u00XX, each invalid UTF-8
 * sequence (a maximal subpart, as WHATWG's decoder counts them) as U+FFFD,
 * the rest as is. Returns the number of sequences replaced. */
size_t evalua_json_quote(evalua_put_fn put, void *ud, const char *s, size_t n);
/* The length of the valid UTF-8 sequence that starts s (n > 0 bytes left),
 * or 0 with *sub the length of the invalid subpart to replace. */
size_t evalua_utf8_valid(const char *s, size_t n, size_t *sub);
/* The shortest of %.15g / %.17g that reads back as x (x finite); integral
 * values below 2^53 without a fraction. Writes at most 40 bytes. */
size_t evalua_json_number(double x, char *out);

/* Where encoded text goes; a value raw-equal to the one at stack index
 * marker (0: none) is not encoded but handed to hook, which writes it. */
struct evalua_json_out {
  evalua_put_fn put;
  void *ud;
  void (*hook)(void *hook_ud, int depth);
  void *hook_ud;
  int marker;
};

/* Encodes the value at idx as json.lua would (sorted keys, indent, exact
 * numbers); raises a Lua error for what JSON cannot hold. Returns the
 * number of invalid UTF-8 sequences written as U+FFFD (not counting what
 * the hook writes). */
size_t evalua_json_encode(lua_State *L, int idx, const char *indent, int depth, const struct evalua_json_out *out);

struct evm_alloc;
/* The object or list at text (checked by metrics/rows_json.c) written as
 * evalua_json_encode writes what lua-cjson decodes from it with nulls
 * stripped (json_recode.c); adds the replacements to *replaced. 0, ENOMEM,
 * ELOOP when nested deeper than the encoder goes, or ERANGE for a number
 * out of a double's range (which the loader refuses). */
int evalua_json_recode(const char *text, const char *indent, int depth, const struct evm_alloc *a,
                       const struct evalua_json_out *out, size_t *replaced);

#endif

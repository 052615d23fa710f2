/* Shared between the column modules: data sets, group codes, score columns. */
#ifndef EVALUA_L_TABLE_H
#define EVALUA_L_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "evalua/idtab.h"
#include "evalua/table.h"

/* Group codes: code[i] in 0..nvalues-1 for each of n rows. */
struct lcodes {
  size_t n, nvalues;
  uint32_t *code;
};

/* Score columns: val[j][i] of metric j for row i; miss[j][i] = 1 when
 * unmeasured; why[j][i] indexes reasons (0: none). */
struct lscores {
  size_t n, m;
  double **val;
  uint8_t **miss;
  uint32_t **why;
  char **reasons;
  size_t *reason_len;    /* of each reason's text, without its NUL */
  size_t nreasons, capreasons, caplens;
  struct evr_idtab seen; /* reason text -> index */
};

struct evt_table *ltable_check(lua_State *L, int arg);
struct lcodes *lcodes_check(lua_State *L, int arg);
struct lscores *lscores_check(lua_State *L, int arg);
/* The index of reason text s (added when new). */
uint32_t lscores_reason(lua_State *L, struct lscores *s, const char *text, size_t len);

int luaopen_evalua_scores(lua_State *L);

#endif

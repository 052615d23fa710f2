/* CSV (RFC 4180) rows into columns: quoted fields may hold the separator,
 * doubled quotes and line breaks; the first record names the fields. The
 * separator is ',' unless a first line "sep=X" names another (as Excel
 * writes it) or the header holds ';' or a tab and no ',' outside quotes.
 * A cell is typed by its field: numbers and booleans from their text, list
 * fields (the row format's, and a user's id[] and string[]) by the rule of
 * list cells below; anything else a string; an empty cell is an absent key.
 * List cells go through the JSON reader, so both formats check a row the
 * same way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalua/rows.h"

struct span {
  size_t off, len; /* in the scratch buffer */
};

struct csv {
  const struct evm_alloc *a; /* the table's */
  const char *p, *end;
  uint32_t line;
  char sep;        /* the field separator */
  char *scratch;   /* unescaped fields of the current record */
  size_t slen, scap;
  struct span *f;
  size_t nf, capf;
};

static int scratch_put(struct csv *c, const char *s, size_t n) {
  if (c->slen + n + 1 > c->scap) {
    size_t cap = c->scap ? c->scap : 4096;
    while (cap < c->slen + n + 1) cap *= 2;
    char *p = evm_resize(c->a, c->scratch, c->scap, cap, 1);
    if (!p) return -1;
    c->scratch = p, c->scap = cap;
  }
  memcpy(c->scratch + c->slen, s, n);
  c->slen += n;
  c->scratch[c->slen] = '\0';
  return 0;
}

static int field_push(struct csv *c, size_t off) {
  if (c->nf == c->capf) {
    size_t cap = c->capf ? c->capf * 2 : 32;
    struct span *f = evm_resize(c->a, c->f, c->capf, cap, sizeof *f);
    if (!f) return -1;
    c->f = f, c->capf = cap;
  }
  c->f[c->nf++] = (struct span){off, c->slen - off};
  if (scratch_put(c, "", 0)) return -1; /* room for, and a NUL after, the field */
  c->slen++;
  return 0;
}

/* One quoted field, after its opening quote. */
static int quoted(struct csv *c, char *err, size_t errlen) {
  for (;;) {
    const char *q = memchr(c->p, '"', (size_t)(c->end - c->p));
    if (!q) return snprintf(err, errlen, "unterminated quoted field"), 1; /* named by the line it starts on */
    for (const char *x = c->p; x < q; x++) c->line += *x == '\n';
    if (scratch_put(c, c->p, (size_t)(q - c->p))) return -1;
    c->p = q + 1;
    if (c->p < c->end && *c->p == '"') {
      if (scratch_put(c, "\"", 1)) return -1;
      c->p++;
      continue;
    }
    return 0;
  }
}

/* The next record into c->f; 1 at the end of the input, -1 out of memory,
 * 2 on a syntax error (err set). Empty lines are skipped. */
static int record(struct csv *c, char *err, size_t errlen, uint32_t *start) {
  c->nf = 0, c->slen = 0;
  while (c->p < c->end && (*c->p == '\n' || (*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n')))
    c->line++, c->p += *c->p == '\r' ? 2 : 1;
  if (c->p >= c->end) return 1;
  *start = c->line;
  for (;;) {
    size_t off = c->slen;
    if (c->p < c->end && *c->p == '"') {
      c->p++;
      int rc = quoted(c, err, errlen);
      if (rc) return rc == 1 ? 2 : -1;
    } else {
      const char *e = c->p;
      while (e < c->end && *e != c->sep && *e != '\n' && *e != '\r') e++;
      if (scratch_put(c, c->p, (size_t)(e - c->p))) return -1;
      c->p = e;
    }
    if (field_push(c, off)) return -1;
    if (c->p < c->end && *c->p == c->sep) { c->p++; continue; }
    if (c->p < c->end && *c->p == '\r') c->p++;
    if (c->p < c->end && *c->p == '\n') c->p++;
    c->line++;
    return 0;
  }
}

/* ---- list cells ----------------------------------------------------------------
 * A list cell that starts with '[' (or, but for texts, '{') is JSON; a
 * blank one is an absent key.
 * Otherwise a list of ids is split at '|' or at ',' (one of the two), a
 * list of texts at '|' only (a comma is part of a text); items are trimmed
 * of spaces and tabs, none may be empty, and an id may hold no space, tab
 * or ';', since such a cell is a list written with another separator.
 * Ids holding any of these characters are written as a JSON array. */

enum items { NOT_A_LIST, IDS, TEXTS, GRADES };

static int fail(char *err, size_t errlen, const char *name, const char *want, const char *text) {
  snprintf(err, errlen, "field '%s': expected %s, got '%.100s'", name, want, text);
  return EVT_ROW_BAD;
}

static const char *const rule[] = {
  [IDS] = "a list cell holds a JSON array, or ids separated by '|' or by ','",
  [TEXTS] = "a list cell of texts holds a JSON array, or texts separated by '|'",
};

static enum items items_of(const struct evt_schema *sc, const char *name) {
  for (int k = 0; sc->rag && k < EVT_NLISTS; k++)
    if (strcmp(name, evt_list_names[k]) == 0)
      return k == EVT_GRADES ? GRADES : k == EVT_RETRIEVED || k == EVT_GOLD_IDS ? IDS : TEXTS;
  for (size_t i = 0; i < sc->nfields; i++)
    if (strcmp(sc->fields[i].name, name) == 0)
      return sc->fields[i].want == EVT_W_IDS ? IDS : sc->fields[i].want == EVT_W_TEXTS ? TEXTS : NOT_A_LIST;
  return NOT_A_LIST;
}

static int refuse(char *err, size_t errlen, const char *name, enum items kind, const char *fmt, const char *text,
                  size_t n) {
  char what[160];
  snprintf(what, sizeof what, fmt, (int)(n < 100 ? n : 100), text);
  snprintf(err, errlen, "field '%s': %s; %s", name, what, rule[kind]);
  return EVT_ROW_BAD;
}

static int blank(char ch) { return ch == ' ' || ch == '\t'; }

/* NULL when the trimmed item s[0..n) may stand in a list of kind, else
 * what is wrong with it (a format for refuse). */
static const char *bad_item(enum items kind, const char *s, size_t n) {
  if (n == 0) return "an empty item in '%.*s'";
  for (size_t i = 0; kind == IDS && i < n; i++) {
    if (s[i] == ';') return "the item '%.*s' holds ';'";
    if (blank(s[i]) || s[i] == '\n' || s[i] == '\r') return "the item '%.*s' holds white space";
  }
  return NULL;
}

/* The items of text as a JSON array (a single gold answer: a JSON string)
 * in *out, a block of *size bytes from a; 0, or EVT_ROW_BAD with err set,
 * or EVT_ROW_NOMEM. */
static int items_json(const struct evm_alloc *al, const char *name, enum items kind, const char *text, char **out,
                      size_t *outlen, size_t *size, char *err, size_t errlen) {
  int pipe = strchr(text, '|') != NULL, comma = kind == IDS && strchr(text, ',') != NULL;
  if (pipe && comma) return refuse(err, errlen, name, kind, "'%.*s' mixes '|' and ','", text, strlen(text));
  char sep = pipe ? '|' : comma ? ',' : '\0';
  int array = sep || strcmp(name, "gold_answers") != 0;
  size_t w = 0, n = strlen(text);
  *size = n > (SIZE_MAX - 8) / 6 ? 0 : 6 * n + 8; /* a byte becomes at most \u00XX */
  char *o = *size ? evm_new(al, *size, 1) : NULL;
  if (!o) return EVT_ROW_NOMEM;
  if (array) o[w++] = '[';
  for (const char *s = text;;) {
    const char *e = sep ? strchr(s, sep) : NULL;
    if (!e) e = s + strlen(s);
    const char *a = s, *b = e;
    while (a < b && blank(*a)) a++;
    while (b > a && blank(b[-1])) b--;
    const char *why = bad_item(kind, a, (size_t)(b - a));
    if (why) {
      evm_free(al, o, *size, 1);
      return b > a ? refuse(err, errlen, name, kind, why, a, (size_t)(b - a))
                   : refuse(err, errlen, name, kind, why, text, strlen(text));
    }
    if (s != text) o[w++] = ',';
    o[w++] = '"';
    for (const char *p = a; p < b; p++) {
      unsigned char ch = (unsigned char)*p;
      if (ch == '"' || ch == '\\') o[w++] = '\\', o[w++] = (char)ch;
      else if (ch < 0x20) w += (size_t)snprintf(o + w, 8, "\\u%04x", ch);
      else o[w++] = (char)ch;
    }
    o[w++] = '"';
    if (!*e) break;
    s = e + 1;
  }
  if (array) o[w++] = ']';
  *out = o, *outlen = w;
  return EVT_ROW_OK;
}

static int list_cell(struct evt_table *t, const struct evt_schema *sc, const char *name, enum items kind,
                     const char *text, char *err, size_t errlen) {
  const char *p = text;
  while (blank(*p)) p++;
  if (!*p) return EVT_ROW_OK; /* a blank cell, as an empty one, is an absent key */
  if (*p == '[' || (*p == '{' && kind != TEXTS)) {
    int rc = evt_json_value(t, name, strlen(name), text, strlen(text), sc, err, errlen);
    size_t n = strlen(err);
    if (rc == EVT_ROW_BAD && strstr(err, "invalid JSON") && n < errlen) /* such as Python's ['a', 'b'] */
      snprintf(err + n, errlen - n, " (a cell that starts with '%c' is read as JSON)", *p);
    return rc;
  }
  if (kind == GRADES) return fail(err, errlen, name, "a JSON object id -> grade", text);
  char *json;
  size_t len, size;
  int rc = items_json(&t->a, name, kind, text, &json, &len, &size, err, errlen);
  if (rc != EVT_ROW_OK) return rc;
  rc = evt_json_value(t, name, strlen(name), json, len, sc, err, errlen);
  evm_free(&t->a, json, size, 1);
  return rc;
}

/* ---- other cells -------------------------------------------------------------- */

/* A number cell; in a ';'-separated file (a European spreadsheet's) a single
 * ',' with no '.' is the decimal point: "0,5" is 0.5. */
static int number_cell(struct evt_cell *c, const char *name, enum evt_want w, const char *text, int decimal_comma,
                       char *err, size_t errlen) {
  const char *want = w == EVT_W_NUMBER ? "number" : "integer", *given = text;
  char buf[64];
  const char *comma = strchr(text, ',');
  size_t n = strlen(text);
  if (decimal_comma && comma && !strchr(comma + 1, ',') && !strchr(text, '.') && n < sizeof buf) {
    memcpy(buf, text, n + 1);
    buf[comma - text] = '.';
    text = buf;
  }
  char *end;
  double d = strtod(text, &end);
  if (end == text || *end || !isfinite(d) || (w == EVT_W_INTEGER && d != floor(d))) {
    fail(err, errlen, name, want, given);
    size_t m = strlen(err);
    if (comma && text == given && m < errlen) snprintf(err + m, errlen - m, " (write decimals with '.')");
    return EVT_ROW_BAD;
  }
  const char *digits = text + (*text == '-' || *text == '+');
  if (strspn(digits, "0123456789") == strlen(digits) && fabs(d) < 9.2e18) c->type = EVT_INT, c->v.i = (int64_t)d;
  else c->type = EVT_NUM, c->v.d = d;
  return EVT_ROW_OK;
}

static enum evt_want want_of(const struct evt_schema *sc, const char *name) {
  for (size_t i = 0; i < sc->nfields; i++)
    if (strcmp(sc->fields[i].name, name) == 0) return sc->fields[i].want;
  return EVT_W_STRING; /* a CSV cell is text unless its field says otherwise */
}

static int scalar_cell(struct evt_table *t, const struct evt_schema *sc, const char *name, const char *text,
                       int decimal_comma, char *err, size_t errlen) {
  enum evt_want w = want_of(sc, name);
  struct evt_col *col = evt_col_get(t, name, strlen(name), 1);
  if (!col) return EVT_ROW_NOMEM;
  struct evt_cell *c = &col->cells[t->n];
  if (w == EVT_W_NUMBER || w == EVT_W_INTEGER) return number_cell(c, name, w, text, decimal_comma, err, errlen);
  if (w == EVT_W_BOOLEAN) {
    int yes = !strcmp(text, "true") || !strcmp(text, "1"), no = !strcmp(text, "false") || !strcmp(text, "0");
    if (!yes && !no) return fail(err, errlen, name, "true or false", text);
    c->type = yes ? EVT_TRUE : EVT_FALSE;
    return EVT_ROW_OK;
  }
  size_t n = strlen(text);
  char *o = evt_text_room(t, n);
  if (!o) return EVT_ROW_NOMEM;
  memcpy(o, text, n);
  c->type = EVT_STR, c->len = (uint32_t)n, c->v.off = evt_text_take(t, n).off;
  return EVT_ROW_OK;
}

/* ---- the file ------------------------------------------------------------------- */

static int row(struct csv *c, struct evt_table *t, const struct evt_schema *sc, char **names, size_t ncols,
               uint32_t line, char *err, size_t errlen) {
  if (c->nf != ncols) {
    snprintf(err, errlen, "expected %zu fields as in the header, got %zu", ncols, c->nf);
    return EVT_ROW_BAD;
  }
  if (evt_row_begin(t, line)) return EVT_ROW_NOMEM;
  int rc = EVT_ROW_OK;
  for (size_t i = 0; i < ncols && rc == EVT_ROW_OK; i++) {
    const char *text = c->scratch + c->f[i].off;
    if (!*text) continue;
    enum items kind = items_of(sc, names[i]);
    rc = kind ? list_cell(t, sc, names[i], kind, text, err, errlen)
              : scalar_cell(t, sc, names[i], text, c->sep == ';', err, errlen);
  }
  if (rc == EVT_ROW_OK) rc = evt_row_check(t, sc, err, errlen);
  if (rc == EVT_ROW_OK) evt_row_commit(t);
  else evt_row_abort(t);
  return rc;
}

static void names_free(const struct evm_alloc *a, char **names, size_t n) {
  for (size_t i = 0; names && i < n; i++) evm_free(a, names[i], names[i] ? strlen(names[i]) + 1 : 0, 1);
  evm_free(a, names, n + 1, sizeof *names);
}

static char **header(struct csv *c, size_t *n, char *err, size_t errlen) {
  char **names = evm_new(c->a, c->nf + 1, sizeof *names);
  if (!names) return NULL;
  memset(names, 0, (c->nf + 1) * sizeof *names);
  for (size_t i = 0; i < c->nf; i++) {
    const char *f = c->scratch + c->f[i].off;
    if (!(names[i] = evm_new(c->a, strlen(f) + 1, 1))) return names_free(c->a, names, c->nf), NULL;
    strcpy(names[i], f);
    for (size_t k = 0; k < i; k++)
      if (!strcmp(names[k], names[i])) snprintf(err, errlen, "field '%s' is named twice in the header", names[i]);
  }
  *n = c->nf;
  return names;
}

/* The field separator, before the header: a first line "sep=X" (read
 * here), else ',' unless the header holds ';' or a tab and no ',' outside
 * quotes; '\0' with err set when the header holds both ',' and ';'. */
static char separator(struct csv *c, char *err, size_t errlen) {
  const char *p = c->p;
  if (c->end - p >= 5 && memcmp(p, "sep=", 4) == 0 && (p + 5 == c->end || p[5] == '\n' || p[5] == '\r')) {
    char sep = p[4];
    if (sep == '"' || sep == '\n' || sep == '\r') return snprintf(err, errlen, "'sep=%c' names no separator", sep), '\0';
    c->p += 5 + (p + 5 < c->end && p[5] == '\r');
    if (c->p < c->end && *c->p == '\n') c->p++;
    c->line++;
    return sep;
  }
  int quoted = 0, comma = 0, semicolon = 0, tab = 0;
  for (; p < c->end && (quoted || (*p != '\n' && *p != '\r')); p++) {
    if (*p == '"') quoted = !quoted;
    else if (!quoted) comma |= *p == ',', semicolon |= *p == ';', tab |= *p == '\t';
  }
  if (comma && semicolon)
    return snprintf(err, errlen, "the header holds both ',' and ';' outside quotes, so which one separates fields "
                    "is unclear; write 'sep=,' or 'sep=;' as the first line"), '\0';
  return comma ? ',' : semicolon ? ';' : tab ? '\t' : ',';
}

int evt_csv_read(struct evt_table *t, const char *buf, size_t len, const struct evt_schema *sc, int lenient,
                 evt_skip_fn skip, void *ud, char *err, size_t errlen, uint32_t *line) {
  struct csv c = {&t->a, buf, buf + len, 1, ',', NULL, 0, 0, NULL, 0, 0};
  if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) c.p += 3; /* a BOM */
  char **names = NULL;
  size_t ncols = 0;
  int rc = EVT_ROW_OK;
  err[0] = '\0';
  *line = 1;
  if (!(c.sep = separator(&c, err, errlen))) return EVT_ROW_BAD;
  for (;;) {
    uint32_t start = c.line;
    int r = record(&c, err, errlen, &start);
    if (r == 1) break;
    *line = start;
    if (r < 0) { rc = EVT_ROW_NOMEM; break; }
    if (r == 2) { rc = EVT_ROW_BAD; break; }
    if (!names) {
      if (!(names = header(&c, &ncols, err, errlen))) { rc = EVT_ROW_NOMEM; break; }
      if (err[0]) { rc = EVT_ROW_BAD; break; }
      continue;
    }
    r = row(&c, t, sc, names, ncols, start, err, errlen);
    if (r == EVT_ROW_NOMEM || (r == EVT_ROW_BAD && !lenient)) { rc = r; break; }
    if (r == EVT_ROW_BAD) skip(ud, start, err), err[0] = '\0';
  }
  if (names) names_free(c.a, names, ncols);
  evm_free(c.a, c.scratch, c.scap, 1);
  evm_free(c.a, c.f, c.capf, sizeof *c.f);
  return rc;
}

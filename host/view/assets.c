/* Looks up the viewer's embedded app files by URL path. */
#include <string.h>

#include "app_assets.h"

const struct evalua_view_asset *evalua_view_asset(const char *path) {
  if (strcmp(path, "/") == 0) path = "/index.html";
  for (const struct evalua_view_asset *a = evalua_view_assets; a->path; a++)
    if (strcmp(a->path, path) == 0) return a;
  return NULL;
}

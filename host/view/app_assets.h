/* The viewer's app (host/view/app/), compiled into the binary by
 * host/view/embed_app.cmake. */
#ifndef EVALUA_VIEW_APP_ASSETS_H
#define EVALUA_VIEW_APP_ASSETS_H

#include <stddef.h>

struct evalua_view_asset {
  const char *path; /* "/index.html" */
  const char *type; /* its Content-Type */
  const unsigned char *data;
  size_t len;
};

/* Terminated by {0}; generated into gen/view_assets.c. */
extern const struct evalua_view_asset evalua_view_assets[];

/* The asset served at path ("/" is "/index.html"), or NULL. */
const struct evalua_view_asset *evalua_view_asset(const char *path);

#endif

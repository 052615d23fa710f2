/* libmicrohttpd opened on first use, not linked: its tree (GnuTLS,
 * nettle, p11-kit, libidn2 ...) cost every run the dynamic loader's time,
 * though only `evalua view` serves HTTP. This file defines the functions
 * server.c and l_view.c call, with libmicrohttpd's own prototypes (the
 * header checks them), each forwarding to the library; MHD_start_daemon
 * opens it, so the others only ever run once a daemon exists. When it
 * cannot be opened, MHD_start_daemon returns NULL with errno ELIBACC and the
 * reason on stderr. A call to another MHD function fails to link: add it
 * here. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>

#include <microhttpd.h>

#include "lib_load.h"

static struct {
  struct MHD_Daemon *(*start_va)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                                 MHD_AccessHandlerCallback, void *, va_list);
  void (*stop)(struct MHD_Daemon *);
  enum MHD_Result (*run_wait)(struct MHD_Daemon *, int32_t);
  const union MHD_DaemonInfo *(*info)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
  enum MHD_Result (*add_header)(struct MHD_Response *, const char *, const char *);
  struct MHD_Response *(*from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
  void (*destroy)(struct MHD_Response *);
  int (*values)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
  const char *(*lookup)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
  enum MHD_Result (*queue)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
} fns;
static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_mhd(void) {
  const struct lib_fn want[] = {
      {"MHD_start_daemon_va", &fns.start_va},
      {"MHD_stop_daemon", &fns.stop},
      {"MHD_run_wait", &fns.run_wait},
      {"MHD_get_daemon_info", &fns.info},
      {"MHD_add_response_header", &fns.add_header},
      {"MHD_create_response_from_buffer", &fns.from_buffer},
      {"MHD_destroy_response", &fns.destroy},
      {"MHD_get_connection_values", &fns.values},
      {"MHD_lookup_connection_value", &fns.lookup},
      {"MHD_queue_response", &fns.queue},
  };
  ready = evalua_lib_open("libmicrohttpd.so.12", NULL, "libmicrohttpd12", want, sizeof want / sizeof *want);
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...) {
  pthread_once(&once, open_mhd);
  if (!ready) return errno = ELIBACC, NULL;
  va_list ap;
  va_start(ap, dh_cls);
  struct MHD_Daemon *d = fns.start_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
  va_end(ap);
  return d;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon) { fns.stop(daemon); }
enum MHD_Result MHD_run_wait(struct MHD_Daemon *daemon, int32_t millisec) { return fns.run_wait(daemon, millisec); }

/* Only the info types that take no further argument (BIND_PORT ...). */
const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type,
                                                ...) {
  return fns.info(daemon, info_type);
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header, const char *content) {
  return fns.add_header(response, header, content);
}
struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode) {
  return fns.from_buffer(size, buffer, mode);
}
void MHD_destroy_response(struct MHD_Response *response) { fns.destroy(response); }
int MHD_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                              MHD_KeyValueIterator iterator, void *iterator_cls) {
  return fns.values(connection, kind, iterator, iterator_cls);
}
const char *MHD_lookup_connection_value(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                        const char *key) {
  return fns.lookup(connection, kind, key);
}
enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response) {
  return fns.queue(connection, status_code, response);
}

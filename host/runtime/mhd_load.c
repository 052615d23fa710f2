/* libmicrohttpd opened on first use (lazy_lib.h): the functions `evalua
 * view` calls (host/view/server.c). Linked, libmicrohttpd and the GnuTLS it
 * needs cost every run about 3.4 ms of CPU at start-up. */
#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "lazy_lib.h"

static struct lazy_lib mhd = {.soname = "libmicrohttpd.so.12", .package = "libmicrohttpd12"};

LAZY_FN(mhd, enum MHD_Result, MHD_add_response_header,
        (struct MHD_Response *response, const char *header, const char *content), (response, header, content), MHD_NO)
LAZY_FN(mhd, struct MHD_Response *, MHD_create_response_from_buffer,
        (size_t size, void *buffer, enum MHD_ResponseMemoryMode mode), (size, buffer, mode), NULL)
LAZY_VOID(mhd, MHD_destroy_response, (struct MHD_Response *response), (response))
LAZY_FN(mhd, int, MHD_get_connection_values,
        (struct MHD_Connection *connection, enum MHD_ValueKind kind, MHD_KeyValueIterator iterator, void *iterator_cls),
        (connection, kind, iterator, iterator_cls), 0)
LAZY_FN(mhd, const char *, MHD_lookup_connection_value,
        (struct MHD_Connection *connection, enum MHD_ValueKind kind, const char *key), (connection, kind, key), NULL)
LAZY_FN(mhd, enum MHD_Result, MHD_queue_response,
        (struct MHD_Connection *connection, unsigned int status_code, struct MHD_Response *response),
        (connection, status_code, response), MHD_NO)
LAZY_FN(mhd, enum MHD_Result, MHD_run_wait, (struct MHD_Daemon *daemon, int32_t millisec), (daemon, millisec), MHD_NO)
LAZY_VOID(mhd, MHD_stop_daemon, (struct MHD_Daemon *daemon), (daemon))

/* Variadic: the options go on as a va_list, to MHD_start_daemon_va. */
struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                    MHD_AccessHandlerCallback dh, void *dh_cls, ...) {
  void *p = lazy_sym(&mhd, "MHD_start_daemon_va");
  if (!p) return NULL;
  struct MHD_Daemon *(*fn)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *, MHD_AccessHandlerCallback,
                           void *, va_list);
  memcpy(&fn, &p, sizeof p);
  va_list ap;
  va_start(ap, dh_cls);
  struct MHD_Daemon *d = fn(flags, port, apc, apc_cls, dh, dh_cls, ap);
  va_end(ap);
  return d;
}

/* Variadic too; no information type evalua asks for takes an argument
 * (MHD_DAEMON_INFO_BIND_PORT), so none is passed on. */
const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type, ...) {
  void *p = lazy_sym(&mhd, "MHD_get_daemon_info");
  if (!p) return NULL;
  const union MHD_DaemonInfo *(*fn)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
  memcpy(&fn, &p, sizeof p);
  return fn(daemon, info_type);
}

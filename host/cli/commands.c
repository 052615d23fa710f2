/* The table of subcommands; a new one is a line here and a file of its own. */
#include <stddef.h>

#include "commands.h"

const struct evalua_command evalua_commands[] = {
  {"init", evalua_init_main},
  {"trec", evalua_trec_main},
  {"diff", evalua_diff_main},
  {"view", evalua_view_main},
  {NULL, NULL},
};

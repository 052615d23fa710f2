/* Subcommands other than run/version/help, each a main() of its own. */
#ifndef EVALUA_COMMANDS_H
#define EVALUA_COMMANDS_H

struct evalua_command {
  const char *name;
  int (*main)(int argc, char **argv); /* argv[0] is the command name */
};

/* Terminated by {NULL, NULL}; defined in commands.c. */
extern const struct evalua_command evalua_commands[];


#endif

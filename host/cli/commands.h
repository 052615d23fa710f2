/* Subcommands other than run/version/help, each a main() of its own. */
#ifndef EVALUA_COMMANDS_H
#define EVALUA_COMMANDS_H

struct evalua_command {
  const char *name;
  int (*main)(int argc, char **argv); /* argv[0] is the command name */
};

struct lua_State;

/* Terminated by {NULL, NULL}; defined in commands.c. */
extern const struct evalua_command evalua_commands[];

/* evalua init: scaffolds an evaluation project (init_cmd.c). */
int evalua_init_main(int argc, char **argv);
/* evalua trec: trec_eval's report from TREC qrels and run files (trec_cmd.c). */
int evalua_trec_main(int argc, char **argv);

/* Runs module's main(arg) in a trusted state, arg as for a script; prepare,
 * when given, runs first (preloads of the command's own); the exit status
 * is main's integer result, 3 when it raised (lua_main.c). */
int evalua_lua_main(const char *module, void (*prepare)(struct lua_State *L), int argc, char **argv);

/* evalua diff: two saved JSON reports compared (diff_cmd.c, lua/evalua/history/diff.lua). */
int evalua_diff_main(int argc, char **argv);
/* evalua view: the interactive viewer (host/view/view_cmd.c, lua/evalua/view/). */
int evalua_view_main(int argc, char **argv);


#endif

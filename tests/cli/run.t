The evalua command line: run, version, help, and exit statuses.

  $ cd "$CRAMTMP"

A script error prints FILE:LINE: message and a traceback, and exits 3:

  $ printf 'local cfg = {}\nlocal port = 8080\nprint(cfg.server.port)\n' > broken.lua
  $ "$EVALUA" run broken.lua
  broken.lua:3: attempt to index a nil value (field 'server')
  stack traceback:
  \tbroken.lua:3: in main chunk (esc)
  \t[C]: in ? (esc)
  [3]

An error in a library module shows its real source path:

  $ printf 'local ev = require "evalua"\nev.dataset.load(nil)\n' > libcall.lua
  $ "$EVALUA" run libcall.lua 2>&1 | grep -o 'lua/evalua/data/dataset.lua:[0-9]*:' | head -1
  lua/evalua/data/dataset.lua:*: (glob)

A syntax error is a script error too:

  $ printf 'x = = 1\n' > syntax.lua
  $ "$EVALUA" run syntax.lua
  syntax.lua:1: unexpected symbol near '='
  [3]

The script sees arg as the lua interpreter sets it, and ... as its arguments;
an integer returned from the main chunk is the exit status:

  $ printf 'print(arg[0], arg[1], arg[2], arg[-1], select("#", ...))\nreturn tonumber(arg[1])\n' > args.lua
  $ "$EVALUA" run args.lua 1 two
  args.lua\t1\ttwo\trun\t2 (esc)
  [1]

ev.exit sets the status from anywhere, even inside a sandboxed script:

  $ printf 'local ev = require "evalua"\nlocal function deep() ev.exit(4) end\ndeep()\nprint("not reached")\n' > exit.lua
  $ "$EVALUA" run exit.lua
  [4]
  $ "$EVALUA" run --sandbox exit.lua
  [4]

Usage errors print one line and exit 2:

  $ "$EVALUA"
  evalua: no command given (try 'evalua --help')
  [2]
  $ "$EVALUA" frobnicate
  evalua: unknown command 'frobnicate' (try 'evalua --help')
  [2]
  $ "$EVALUA" run
  evalua: run needs a SCRIPT (try 'evalua --help')
  [2]
  $ "$EVALUA" run --cpu-limit soon x.lua
  evalua: --cpu-limit: 'soon' is not a number of seconds (try 'evalua --help')
  [2]
  $ "$EVALUA" run missing.lua
  evalua: cannot open script 'missing.lua' (no such file)
  [2]

version names the versions of the libraries it runs on:

  $ "$EVALUA" version
  evalua 0.1.0
  Lua 5.4.* (glob)
  lua-cjson 2.1.* (glob)
  libcurl * (glob)
  PCRE2 10.* (glob)
  utf8proc 2.* (glob)

  $ "$EVALUA" --help | head -1
  usage: evalua run [OPTIONS] SCRIPT [ARG...]   run a Lua script

run --help is the same text (it asked for a value of an option '--help'):

  $ "$EVALUA" run --help | cmp - <("$EVALUA" --help) && echo same
  same
  $ "$EVALUA" run -h > /dev/null; echo $?
  0

A bad option value of a bundled script is refused before any work, with
no traceback: nothing is evaluated or written (it was refused at the end,
after the whole, possibly paid, evaluation):

  $ "$EVALUA" run "$EVALUA_SRC/scripts/rag_report.lua" --format md,nosuch --out "$CRAMTMP/never" --judge openai
  evalua: --format must be one of csv, html, json, junit, markdown, md, terminal, got 'nosuch' (try --help)
  [2]
  $ ls "$CRAMTMP/never"
  ls: cannot access '*/never': No such file or directory (glob)
  [2]

run --out DIR is the script's output folder (it made an empty DIR and the
reports went to ./out):

  $ "$EVALUA" run --out "$CRAMTMP/given" "$EVALUA_SRC/scripts/custom_metric.lua" > /dev/null
  $ ls "$CRAMTMP/given"; ls out
  custom.csv
  custom.html
  custom.json
  custom.junit.xml
  custom.md
  ls: cannot access 'out': No such file or directory
  [2]

The library loads from disk with --lua-dir or EVALUA_LUA_DIR, so edits need no rebuild:

  $ mkdir -p dev/evalua && printf 'return { version = "from disk" }\n' > dev/evalua/init.lua
  $ printf 'print(require("evalua").version)\n' > v.lua
  $ "$EVALUA" run --lua-dir dev v.lua
  from disk
  $ EVALUA_LUA_DIR=dev "$EVALUA" run v.lua
  from disk
  $ "$EVALUA" run v.lua
  0.1.0

The Debian package as a user installs it: built by CPack, installed with
apt, the main job run by name from /tmp, then removed. It changes the
system, so it runs once (not per build flavour) and only where dpkg and apt
exist; installing needs root, as apt does.

  $ command -v dpkg-deb apt-get > /dev/null || { echo "dpkg and apt-get are missing: not a Debian system"; exit 80; }
  $ [ "$(id -u)" -eq 0 ] || { echo "installing the package needs root: skipped"; exit 80; }
  $ ! dpkg-query -W -f='${Status}\n' evalua 2>/dev/null | grep -q 'install ok installed' || { echo "an evalua package is installed already: remove it first (apt-get remove evalua)"; exit 1; }
  $ cpack -G DEB --config "$EVALUA_BUILD/CPackConfig.cmake" -B "$CRAMTMP/pkg" > "$CRAMTMP/cpack.log" 2>&1 || cat "$CRAMTMP/cpack.log"
  $ cd "$CRAMTMP/pkg" && ls *.deb
  evalua_0.1.0_amd64.deb

Its dependencies are declared (derived by dpkg-shlibdeps from the libraries
the binary links, and named in cmake/install.cmake for those it opens on
first use):

  $ dpkg-deb -f evalua_*.deb Depends | tr ',' '\n' | sed 's/ *(.*//; s/^ *//' | sort
  libc6
  libcurl4
  liblua5.4-0
  libmicrohttpd12
  libpcre2-8-0
  libsqlite3-0
  libssl3
  libutf8proc2
  libxml2
  libyaml-0-2
  lua-cjson

  $ apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "./$(ls evalua_*.deb)" > "$CRAMTMP/apt.log" 2>&1 || cat "$CRAMTMP/apt.log"
  $ trap 'apt-get remove -y -q -o DPkg::Lock::Timeout=300 evalua > /dev/null 2>&1' EXIT
  $ command -v evalua
  /usr/bin/evalua
  $ ls /usr/share/man/man1/evalua.1 /usr/share/bash-completion/completions/evalua /usr/share/doc/evalua/README.md
  /usr/share/bash-completion/completions/evalua
  /usr/share/doc/evalua/README.md
  /usr/share/man/man1/evalua.1

The main job, by name, from a fresh folder under /tmp (at full width: cram
sets COLUMNS=80, and the table would continue in more tables):

  $ work=$(mktemp -d /tmp/evalua-deb-XXXXXX) && cd "$work"
  $ COLUMNS= evalua run rag_report --quiet > table.txt
  wrote out/rag_report.md, out/rag_report.json, out/rag_report.csv, out/rag_report.html, out/rag_report.junit.xml
  $ grep -E '^(system|hybrid_rerank +all) ' table.txt | cut -c1-59
  system         slice                    n  recall@5     mrr
  hybrid_rerank  all                     60     0.695   0.947

and a new project:

  $ evalua init proj > /dev/null && cd proj && COLUMNS= evalua run eval.lua --quiet | grep -E '^all +all '
  all     all                  3     0.667  0.500     0.429             0.667         0.667     - (0/3)
  $ cd / && rm -rf "$work"

Removing it leaves nothing behind:

  $ apt-get remove -y -q -o DPkg::Lock::Timeout=300 evalua > "$CRAMTMP/apt.log" 2>&1 || cat "$CRAMTMP/apt.log"
  $ trap - EXIT
  $ hash -r; command -v evalua; ls /usr/share/evalua /usr/share/doc/evalua 2>&1 | sed 's/^ls: //'
  cannot access '/usr/share/evalua': No such file or directory
  cannot access '/usr/share/doc/evalua': No such file or directory

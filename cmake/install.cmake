# Install rules and the Debian package (included from CMakeLists.txt).
#   cmake --install build [--prefix DIR]      binary, man page, docs, bundled
#                                             scripts and data, bash completion
#   cpack --config build/CPackConfig.cmake    evalua_<version>_<arch>.deb
# Bundled scripts go to share/evalua/scripts; the binary finds them relative
# to its own folder, so `evalua run rag_report` works from any folder and the
# tree works under any prefix.
include(GNUInstallDirs)

set(EVALUA_SCRIPTS_DESTINATION ${CMAKE_INSTALL_DATADIR}/evalua/scripts)
file(RELATIVE_PATH EVALUA_BUNDLED_SCRIPTS ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_FULL_DATADIR}/evalua/scripts)
foreach(suffix "" ${EVALUA_FLAVOURS})
  target_compile_definitions(evalua_host${suffix} PRIVATE EVALUA_BUNDLED_SCRIPTS="${EVALUA_BUNDLED_SCRIPTS}")
endforeach()

install(TARGETS evalua RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/docs/evalua.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png") # docs/img/: the README's screenshot
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scripts/ DESTINATION ${EVALUA_SCRIPTS_DESTINATION})
install(FILES ${CMAKE_SOURCE_DIR}/completion/evalua.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME evalua)

# The Debian package: runtime dependencies come from dpkg-shlibdeps (libc,
# liblua5.4-0, lua-cjson, libutf8proc2, libpcre2-8-0, libsqlite3-0), so they match the
# libraries the binary was linked against.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME evalua)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Lua-scriptable evaluation host for RAG and LLM applications")
set(CPACK_PACKAGE_DESCRIPTION "evalua evaluates retrieval-augmented generation and other LLM applications:
retrieval, answer and statistics metrics in C, a concurrent, caching LLM judge
client, and criteria, prompts, slices, gates and reports in Lua scripts.")
set(CPACK_PACKAGE_CONTACT "evalua maintainers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcurl, libcrypto, libxml2 and libmicrohttpd are opened on first use
# (host/client/curl_load.c, host/runtime/crypto_load.c, xml_load.c,
# mhd_load.c), so shlibdeps cannot see them: the judge, providers and
# webhooks need the first, hashing (data sets, the judge cache) the second,
# the XML assertions the third, `evalua view` the fourth, all the same.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4 (>= 7.88), libssl3, libxml2, libmicrohttpd12")
set(CPACK_STRIP_FILES ON)
include(CPack)

# The package test changes the system (apt install, then remove): it runs
# once, never beside another test that holds dpkg, and is skipped where dpkg
# and apt are absent.
add_test(NAME install.deb COMMAND ${CRAM} --shell=/bin/bash ${CMAKE_SOURCE_DIR}/tests/install/deb.t
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(install.deb PROPERTIES
  ENVIRONMENT "EVALUA_BUILD=${CMAKE_BINARY_DIR};EVALUA_SRC=${CMAKE_SOURCE_DIR}"
  RESOURCE_LOCK dpkg TIMEOUT 900 SKIP_REGULAR_EXPRESSION "# Ran 1 tests, 1 skipped")

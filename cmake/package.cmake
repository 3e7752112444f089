# Installation and the Debian package (included from CMakeLists.txt).
#
#   cmake --install build [--prefix DIR]   bin/sluice, share/man/man1/sluice.1,
#                                          share/bash-completion/completions/sluice,
#                                          lib/systemd/user/sluice-tick@.{service,timer},
#                                          share/doc/sluice/ (README, CHANGELOG, docs,
#                                          examples/)
#   cd build && cpack -G DEB               sluice_<version>_<arch>.deb: the same under
#                                          /usr, the man page and the docs gzipped,
#                                          /usr/share/doc/sluice/copyright (Apache-2.0)
#                                          and changelog.gz (Debian's format)
#
# The package's Depends are git (sluice runs the git CLI), libcurl4 (loaded
# by the HTTP reviewer; libmicrohttpd12, loaded by `sluice serve`, is
# Recommends) and, when
# dpkg-shlibdeps (Debian package dpkg-dev) is there, the packages of the
# libraries the binary links, as dpkg-shlibdeps finds them; without it, the
# Debian 12 names of those libraries.

include(GNUInstallDirs)

install(TARGETS sluice RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/docs/sluice.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# Where bash-completion loads a command's completion on demand, the first
# time the command is completed.
install(FILES ${CMAKE_SOURCE_DIR}/contrib/sluice.bash-completion
	DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME sluice)
# The systemd user unit templates, one instance per repository (its path,
# systemd-escape --path): where the user manager finds units of packages.
install(FILES ${CMAKE_SOURCE_DIR}/contrib/sluice-tick@.service
	${CMAKE_SOURCE_DIR}/contrib/sluice-tick@.timer
	DESTINATION lib/systemd/user)
# The documentation (the package gzips it, cmake/deb_stage.cmake) and the
# examples: the crontab, the logrotate snippet, the script builder of the
# README's tour, contrib's README.
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/CHANGELOG.md
	${CMAKE_SOURCE_DIR}/docs/ARCHITECTURE.md ${CMAKE_SOURCE_DIR}/docs/RELIABILITY.md
	${CMAKE_SOURCE_DIR}/docs/agents.md ${CMAKE_SOURCE_DIR}/docs/audit.md
	${CMAKE_SOURCE_DIR}/docs/builders.md ${CMAKE_SOURCE_DIR}/docs/config.md
	${CMAKE_SOURCE_DIR}/docs/reviewer.md ${CMAKE_SOURCE_DIR}/docs/scale-out.md
	${CMAKE_SOURCE_DIR}/docs/serve.md ${CMAKE_SOURCE_DIR}/docs/work-orders.md
	DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/contrib/README.md ${CMAKE_SOURCE_DIR}/contrib/cron.example
	${CMAKE_SOURCE_DIR}/contrib/sluice.logrotate ${CMAKE_SOURCE_DIR}/contrib/script-builder.sh
	DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

set(SLUICE_PACKAGE_MAINTAINER
	"sluice maintainers <maintainers@users.noreply.a-seed-e68bd73d.example>"
	CACHE STRING "The Maintainer field of the Debian package")

set(CPACK_PACKAGE_NAME sluice)
set(CPACK_PACKAGE_VENDOR "sluice maintainers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${SLUICE_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "review-gated merge service for AI coding agents")
set(CPACK_PACKAGE_DESCRIPTION
"sluice turns work orders (Markdown files with YAML front matter dropped into a
repository's inbox) into runs of a coding agent's CLI, each in its own git
worktree, gates them with your test commands and a reviewer, and merges an
approved run onto the target branch only after the merge commit itself passed
the gates. Your checkout and uncommitted work are never touched; every run's
artifacts are kept and audited.")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # sluice_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${SLUICE_PACKAGE_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# libcurl is loaded at run time by the HTTP reviewer (reviewer/http.c), not
# linked: dpkg-shlibdeps cannot see it
set(CPACK_DEBIAN_PACKAGE_DEPENDS "git (>= 1:2.38), libcurl4")
# libmicrohttpd is loaded by `sluice serve` only (serve/http.c): recommended
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libmicrohttpd12")
find_program(SLUICE_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(SLUICE_DPKG_SHLIBDEPS)
	set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
	string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libc6, libgit2-1.5, libsqlite3-0,"
		" libyaml-0-2, libjansson4, libssl3")
endif()
# The man page gzipped, and the copyright file (Debian policy 12.3, 12.5),
# written into CPack's staging root before it is packed.
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_SOURCE_DIR}/cmake/deb_stage.cmake)
set(CPACK_SLUICE_COPYRIGHT_IN ${CMAKE_SOURCE_DIR}/cmake/copyright.in)
set(CPACK_SLUICE_CHANGELOG_IN ${CMAKE_SOURCE_DIR}/cmake/changelog.Debian.in)

include(CPack)

# CPACK_PRE_BUILD_SCRIPTS (cmake/package.cmake): runs in CPack after the
# install rules filled the staging root, before the package is made of it.
# For the Debian package: the man page gzipped (-n: no name or time in the
# header, so the same page gives the same bytes) and the copyright file.
set(usr "${CPACK_TEMPORARY_DIRECTORY}${CPACK_PACKAGING_INSTALL_PREFIX}")
set(man "${usr}/share/man/man1/sluice.1")
if(NOT EXISTS "${man}")
	message(FATAL_ERROR "deb_stage: no man page at ${man}")
endif()
file(REMOVE "${man}.gz")
execute_process(COMMAND gzip -9n "${man}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "deb_stage: gzip -9n ${man} failed (${rc})")
endif()
configure_file("${CPACK_SLUICE_COPYRIGHT_IN}" "${usr}/share/doc/sluice/copyright" @ONLY)

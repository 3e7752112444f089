# CPACK_PRE_BUILD_SCRIPTS (cmake/package.cmake): runs in CPack after the
# install rules filled the staging root, before the package is made of it.
# For the Debian package: the man page and the documentation gzipped (-n: no
# name or time in the header, so the same page gives the same bytes), the
# copyright file and the changelog (a native package's changelog.gz is in
# Debian's format; its entry's date is in cmake/changelog.Debian.in: change
# it with the version). The examples stay as they are, to be copied.
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
set(doc "${usr}/share/doc/sluice")
file(GLOB docs "${doc}/*.md")
foreach(f ${docs})
	execute_process(COMMAND gzip -9n "${f}" RESULT_VARIABLE rc)
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "deb_stage: gzip -9n ${f} failed (${rc})")
	endif()
endforeach()
configure_file("${CPACK_SLUICE_COPYRIGHT_IN}" "${doc}/copyright" @ONLY)
configure_file("${CPACK_SLUICE_CHANGELOG_IN}" "${doc}/changelog" @ONLY)
execute_process(COMMAND gzip -9n "${doc}/changelog" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
	message(FATAL_ERROR "deb_stage: gzip -9n ${doc}/changelog failed (${rc})")
endif()

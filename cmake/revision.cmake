# Writes OUTPUT, a C++ file defining fluxjac::kGitRevision, only when the revision changed (so that nothing recompiles
# otherwise). Run at every build by the fluxjac_revision target (CMakeLists.txt, "git revision, recorded in outputs").
#   cmake -DSOURCE_DIR=... -DOUTPUT=.../revision.cpp -P cmake/revision.cmake
execute_process(COMMAND git describe --always --dirty --abbrev=7 --exclude=* WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT revision)
  # Not a git work tree: an export by `git archive` has the commit in cmake/archive-revision.txt (.gitattributes).
  file(STRINGS ${SOURCE_DIR}/cmake/archive-revision.txt revision LIMIT_COUNT 1)
  if(NOT revision MATCHES "^[0-9a-f]+$")
    set(revision unknown)
  endif()
endif()
set(content "// Generated at build time by cmake/revision.cmake.\nnamespace fluxjac {\nextern const char* const kGitRevision;\nconst char* const kGitRevision = \"${revision}\";\n}  // namespace fluxjac\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE ${OUTPUT} "${content}")

# Writes OUTPUT, a C++ file defining fluxjac::kGitRevision, only when the revision changed (so that nothing recompiles
# otherwise). Run at every build by the fluxjac_revision target (CMakeLists.txt, "git revision, recorded in outputs").
#   cmake -DSOURCE_DIR=... -DOUTPUT=.../revision.cpp -P cmake/revision.cmake
# The revision, first that applies:
# - `git describe --always --dirty` where the source is a git work tree that matches its commit;
# - a copy of a work tree whose .git is older than its files (a folder copied to a GPU node with a stale .git): the
#   commit named in .source-revision ("COMMIT TREE", written by scripts/common.sh's fluxjac_stamp_revision before the
#   copy), when TREE is the hash git computes for the files here, so that the name is checked, never trusted;
# - "-dirty" after the commit otherwise; without git, the commit that `git archive` wrote into
#   cmake/archive-revision.txt (.gitattributes), else "unknown".
execute_process(COMMAND git describe --always --dirty --abbrev=7 --exclude=* WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE status)
if(status EQUAL 0 AND revision MATCHES "-dirty$" AND EXISTS ${SOURCE_DIR}/.source-revision)
  file(STRINGS ${SOURCE_DIR}/.source-revision stamp LIMIT_COUNT 1)
  if(stamp MATCHES "^([0-9a-f]+) ([0-9a-f]+)$")
    set(stamped_commit ${CMAKE_MATCH_1})
    set(stamped_tree ${CMAKE_MATCH_2})
    # The tree of the files here as git would commit them (ignored files left out), through an index of its own.
    set(index ${OUTPUT}.index)
    file(REMOVE ${index})
    execute_process(COMMAND ${CMAKE_COMMAND} -E env GIT_INDEX_FILE=${index} git add -A
                    WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE added OUTPUT_QUIET ERROR_QUIET)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env GIT_INDEX_FILE=${index} git write-tree
                    WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE tree OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE written ERROR_QUIET)
    file(REMOVE ${index})
    if(added EQUAL 0 AND written EQUAL 0 AND tree STREQUAL stamped_tree)
      set(revision ${stamped_commit})
    endif()
  endif()
endif()
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

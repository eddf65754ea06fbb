cmake_minimum_required(VERSION 3.19)
# run_first_build.cmake - the kernels' first build says nothing: each command of CMDS (a list
# of commands, each a string of ';'-free words split at spaces) runs with empty program
# caches - the library's (CMRSCL_CACHE_DIR) and the OpenCL compiler's (PoCL's
# POCL_CACHE_DIR; XDG_CACHE_HOME for the rest) - so every kernel is compiled from source, and
# the test fails when a command fails or anything it prints looks like the compiler's
# ("warning", "generated": clang's "1 warning generated." reaches stderr through PoCL).
#   EXE   cmrscl-run
#   DIR   a scratch directory (emptied first)
#   CMDS  the commands' arguments, '|'-separated
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/cmrscl" "${DIR}/pocl" "${DIR}/xdg")
set(ENV{CMRSCL_CACHE_DIR} "${DIR}/cmrscl")
set(ENV{POCL_CACHE_DIR} "${DIR}/pocl")
set(ENV{XDG_CACHE_HOME} "${DIR}/xdg")
set(ENV{CMRSCL_TUNING_DB} off)
string(REPLACE "|" ";" commands "${CMDS}")
foreach(command IN LISTS commands)
  separate_arguments(args UNIX_COMMAND "${command}")
  execute_process(COMMAND "${EXE}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("$ cmrscl-run ${command}\n${out}${err}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "cmrscl-run ${command}: exit status ${rc}")
  endif()
  string(TOLOWER "${out}${err}" text)
  if(text MATCHES "warning|generated")
    message(FATAL_ERROR "cmrscl-run ${command}: the compiler spoke on a first build")
  endif()
endforeach()
file(REMOVE_RECURSE "${DIR}")

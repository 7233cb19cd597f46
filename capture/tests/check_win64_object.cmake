# capture.mingw_compile and capture.msvc_branch: the Windows object exists, is x64 COFF, and calls
# nothing but memcpy and memset (what a freestanding kernel driver can link against). WHY: what
# usually keeps it from being built.
include(${CMAKE_CURRENT_LIST_DIR}/mingw_tools.cmake)
ndkct_mingw_check_start("${OBJ}" "${WHY}")
execute_process(COMMAND ${_objdump} -f "${OBJ}" OUTPUT_VARIABLE _format RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR NOT _format MATCHES "pe-x86-64")
  message(FATAL_ERROR "${OBJ} is not an x64 COFF object:\n${_format}")
endif()
execute_process(COMMAND ${_nm} -u "${OBJ}" OUTPUT_VARIABLE _undefined RESULT_VARIABLE _rc)
string(REGEX MATCHALL "U [A-Za-z0-9_]+" _symbols "${_undefined}")
set(_unexpected "")
foreach(_s IN LISTS _symbols)
  string(REPLACE "U " "" _s "${_s}")
  if(NOT _s MATCHES "^(memcpy|memset)$")
    list(APPEND _unexpected ${_s})
  endif()
endforeach()
if(_unexpected)
  message(FATAL_ERROR "the Windows object calls ${_unexpected}: only memcpy and memset may be "
                      "undefined (no CRT, no OS call)")
endif()
get_filename_component(_name "${OBJ}" NAME)
message(STATUS "${_name}: x64 COFF, undefined symbols: ${_symbols}")

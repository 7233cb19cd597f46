# capture.wdm_driver: the sample kernel driver, linked with the capture and its WDM host, is an
# x64 image for the native subsystem (a .sys) with an entry point, and imports only from the
# kernel (ntoskrnl.exe, and HAL.dll for KeQueryPerformanceCounter): no C runtime, no user-mode
# DLL, nothing a driver cannot load against. It also imports what the host is made of (the file
# writes, the page mapping, the drain thread), so the host really is in the image.
include(${CMAKE_CURRENT_LIST_DIR}/mingw_tools.cmake)
ndkct_mingw_check_start("${SYS}" " (are mingw-w64's DDK headers, ntddk.h, installed?)")
execute_process(COMMAND ${_objdump} -p "${SYS}" OUTPUT_VARIABLE _pe RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "objdump cannot read ${SYS}")
endif()
if(NOT _pe MATCHES "Magic[ \t]+020b" OR NOT _pe MATCHES "Subsystem[ \t]+00000001")
  message(FATAL_ERROR "${SYS} is not a PE32+ image for the native subsystem:\n${_pe}")
endif()
if(_pe MATCHES "AddressOfEntryPoint[ \t]+0+\n")
  message(FATAL_ERROR "${SYS} has no entry point (DriverEntry)")
endif()
string(REGEX MATCHALL "DLL Name: [^\n]+" _dlls "${_pe}")
set(_unexpected "")
set(_names "")
foreach(_d IN LISTS _dlls)
  string(REPLACE "DLL Name: " "" _d "${_d}")
  list(APPEND _names ${_d})
  if(NOT _d MATCHES "^(ntoskrnl\\.exe|HAL\\.dll)$")
    list(APPEND _unexpected ${_d})
  endif()
endforeach()
if(_unexpected)
  message(FATAL_ERROR "${SYS} imports from ${_unexpected}: a kernel driver may import only "
                      "from ntoskrnl.exe and HAL.dll")
endif()
foreach(_f ZwCreateFile ZwWriteFile MmGetVirtualForPhysical PsCreateSystemThread
           KeQueryPerformanceCounter memcpy)
  if(NOT _pe MATCHES "[ \t]${_f}\n")
    message(FATAL_ERROR "${SYS} does not import ${_f}: the WDM host is not in the image")
  endif()
endforeach()
list(JOIN _names ", " _names)
message(STATUS "ndkcap-sample.sys: PE32+, native subsystem, imports from ${_names} only")

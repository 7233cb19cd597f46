# What both Windows checks of capture/ start with: the cross compiler (COMPILER) is there, the
# file they check was built, and mingw-w64's nm and objdump beside the compiler (_nm, _objdump).
# `why` follows "was not built" in the message (what usually causes it), or is "".
macro(ndkct_mingw_check_start file why)
  if(NOT COMPILER)
    message(FATAL_ERROR "no x86_64-w64-mingw32-gcc: install Debian's gcc-mingw-w64-x86-64 (./ndkct does)")
  endif()
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "${file} was not built${why}")
  endif()
  get_filename_component(_dir "${COMPILER}" DIRECTORY)
  find_program(_nm x86_64-w64-mingw32-nm HINTS "${_dir}")
  find_program(_objdump x86_64-w64-mingw32-objdump HINTS "${_dir}")
endmacro()

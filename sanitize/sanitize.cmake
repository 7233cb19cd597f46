# Sanitizer and fuzzing flags for the whole build (included by the top-level CMakeLists.txt).
# NDKCT_SANITIZE: OFF, address (ASan + UBSan + LeakSanitizer), thread (TSan); ON = address.
# NDKCT_FUZZ: every library gets libFuzzer's coverage instrumentation (fuzz/ links the driver).
# See sanitize/README.md for the commands that use them.
string(TOLOWER "${NDKCT_SANITIZE}" _ndkct_sanitize)
if(_ndkct_sanitize MATCHES "^(on|1|true|yes|address|asan)$")
  set(NDKCT_SANITIZER address)
elseif(_ndkct_sanitize MATCHES "^(thread|tsan)$")
  set(NDKCT_SANITIZER thread)
elseif(_ndkct_sanitize MATCHES "^(|off|0|false|no)$")
  set(NDKCT_SANITIZER "")
else()
  message(FATAL_ERROR "NDKCT_SANITIZE=${NDKCT_SANITIZE}: use OFF, address or thread")
endif()

if(NDKCT_SANITIZER STREQUAL "address")
  # Every UBSan finding is fatal (no recovery), so a test cannot pass over one. The libstdc++
  # assertions turn an out-of-range operator[] into an abort even where the read stays inside
  # the allocation (ASan sees only reads outside it).
  # float-cast-overflow is part of Clang's "undefined" but not of GCC's: named for both.
  add_compile_options(-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS)
  add_link_options(-fsanitize=address,undefined,float-cast-overflow)
elseif(NDKCT_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
if(NDKCT_SANITIZER)
  add_compile_definitions(NDKCT_SANITIZER_${NDKCT_SANITIZER})
  # Line tables are enough for symbolized reports, and far cheaper to build than -g.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    add_compile_options(-gline-tables-only)
  else()
    add_compile_options(-g1)
  endif()
endif()

if(NDKCT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NDKCT_FUZZ needs Clang (libFuzzer): configure with "
                        "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

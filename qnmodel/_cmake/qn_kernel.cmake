# One home for how qnmodel builds a compiled kernel loaded with ctypes (the solver kernels,
# qnmodel/solvers/_csrc, and the simulator's event loop, qnmodel/simulation/_csrc). Each of those
# directories stays a standalone CMake project that includes this file by a relative path.
#
#   qn_kernel(TARGET SOURCE PREFIX WHY_NO_FMA)
#
# builds SOURCE into the shared library TARGET, installed as qnmodel/_lib/lib<TARGET>.so.
# PREFIX names the project's warnings-as-errors option (<PREFIX>_WERROR). WHY_NO_FMA is the
# reason printed beside -ffp-contract=off (no fused multiply-add, so results are reproducible).

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release)
endif()

function(qn_kernel target source prefix why_no_fma)
  # Warnings are errors in CI and in the package build (pip install .), as for qnbench.
  if(DEFINED ENV{CI} OR DEFINED SKBUILD)
    set(_werror_default ON)
  else()
    set(_werror_default OFF)
  endif()
  option(${prefix}_WERROR "Treat compiler warnings as errors" ${_werror_default})

  add_library(${target} SHARED ${source})
  set_target_properties(${target} PROPERTIES
    C_STANDARD 11
    C_STANDARD_REQUIRED ON
    C_EXTENSIONS OFF
    C_VISIBILITY_PRESET hidden)
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    message(STATUS "${target}: -ffp-contract=off (${why_no_fma})")
    target_compile_options(${target} PRIVATE -O3 -Wall -Wextra -Wpedantic -ffp-contract=off)
    if(${prefix}_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
  find_library(${prefix}_LIBM m)
  if(${prefix}_LIBM)
    target_link_libraries(${target} PRIVATE ${${prefix}_LIBM})
  endif()

  install(TARGETS ${target}
    LIBRARY DESTINATION qnmodel/_lib
    RUNTIME DESTINATION qnmodel/_lib)
endfunction()

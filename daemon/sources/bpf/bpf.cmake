# SPDX-License-Identifier: GPL-2.0
# The bpf timing source's programs (cpuhp_phases.bpf.c): compiled with clang
# for the target architecture (PT_REGS_* differ per architecture; no BTF and
# no kernel headers needed, only the target's uapi <asm/ptrace.h>), and
# embedded in the daemon as a libbpf skeleton (bpftool gen skeleton): no
# compiler on the board. Included by CMakeLists.txt when CPUHP_BPF is ON;
# sets CPUHP_BPF_SKEL_DIR and the target cpuhp_bpf_skel.
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf)
find_program(BPF_CLANG_EXECUTABLE NAMES clang clang-14)
find_program(BPFTOOL_EXECUTABLE NAMES bpftool PATHS /usr/sbin /sbin)
if(NOT BPF_CLANG_EXECUTABLE OR NOT BPFTOOL_EXECUTABLE)
  message(FATAL_ERROR "CPUHP_BPF=ON (the bpf timing source) needs clang and bpftool: "
                      "apt-get install clang bpftool libbpf-dev, or configure with -DCPUHP_BPF=OFF")
endif()

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|amd64|AMD64|i.86)$")
  set(_cpuhp_bpf_arch x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(_cpuhp_bpf_arch arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^arm")
  set(_cpuhp_bpf_arch arm)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(ppc|powerpc)")
  set(_cpuhp_bpf_arch powerpc)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^riscv")
  set(_cpuhp_bpf_arch riscv)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^s390")
  set(_cpuhp_bpf_arch s390)
else()
  message(FATAL_ERROR "CPUHP_BPF: no BPF register layout for ${CMAKE_SYSTEM_PROCESSOR}; configure with -DCPUHP_BPF=OFF")
endif()

# The target's <asm/ptrace.h>, where its own C compiler finds it (the host's
# multiarch directory, a cross toolchain's, or a sysroot's).
set(_probe ${CMAKE_BINARY_DIR}/cpuhp-bpf-asm-probe.c)
file(WRITE ${_probe} "#include <asm/ptrace.h>\n")
set(_sysroot_flag)
if(CMAKE_SYSROOT)
  set(_sysroot_flag --sysroot=${CMAKE_SYSROOT})
endif()
execute_process(COMMAND ${CMAKE_C_COMPILER} ${_sysroot_flag} -M ${_probe}
  OUTPUT_VARIABLE _deps ERROR_VARIABLE _deps_err RESULT_VARIABLE _rc)
string(REGEX MATCH "[^ \t\n\\\\]*/asm/ptrace\\.h" _ptrace "${_deps}")
if(NOT _rc EQUAL 0 OR NOT _ptrace)
  message(FATAL_ERROR "CPUHP_BPF: ${CMAKE_C_COMPILER} finds no <asm/ptrace.h> (linux-libc-dev of the target): ${_deps_err}")
endif()
get_filename_component(_asm_dir ${_ptrace} DIRECTORY)
get_filename_component(_asm_dir ${_asm_dir} DIRECTORY)
find_path(_cpuhp_bpf_helpers_dir bpf/bpf_helpers.h)
if(NOT _cpuhp_bpf_helpers_dir)
  message(FATAL_ERROR "CPUHP_BPF: no <bpf/bpf_helpers.h> (libbpf-dev of the target)")
endif()

set(CPUHP_BPF_SKEL_DIR ${CMAKE_BINARY_DIR}/bpf)
set(_src ${CMAKE_SOURCE_DIR}/daemon/sources/bpf/cpuhp_phases.bpf.c)
set(_obj ${CPUHP_BPF_SKEL_DIR}/cpuhp_phases.bpf.o)
set(_skel ${CPUHP_BPF_SKEL_DIR}/cpuhp_phases.skel.h)
file(MAKE_DIRECTORY ${CPUHP_BPF_SKEL_DIR})
# -g: BTF for the maps and globals (libbpf needs it, not the kernel);
# -mcpu=v3: atomic fetch-and-add for the record sequence (kernel 5.12+).
add_custom_command(OUTPUT ${_obj}
  COMMAND ${BPF_CLANG_EXECUTABLE} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_${_cpuhp_bpf_arch}
          -Wall -Werror -I${_asm_dir} -I${_cpuhp_bpf_helpers_dir} -c ${_src} -o ${_obj}
  DEPENDS ${_src} ${CMAKE_SOURCE_DIR}/daemon/sources/bpf/cpuhp_phases_abi.h
          ${CMAKE_SOURCE_DIR}/kmod/uapi/cpuhp_probe.h
  COMMENT "BPF object cpuhp_phases.bpf.o (${_cpuhp_bpf_arch})" VERBATIM)
add_custom_command(OUTPUT ${_skel}
  COMMAND sh -c "\"$0\" gen skeleton \"$1\" name cpuhp_phases_bpf > \"$2.tmp\" && mv \"$2.tmp\" \"$2\""
          ${BPFTOOL_EXECUTABLE} ${_obj} ${_skel}
  DEPENDS ${_obj}
  COMMENT "BPF skeleton cpuhp_phases.skel.h" VERBATIM)
add_custom_target(cpuhp_bpf_skel DEPENDS ${_skel})

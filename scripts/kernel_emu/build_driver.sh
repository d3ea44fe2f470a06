# build_driver.sh, sourced by scripts/cuda_emu.sh and scripts/nccl_emu.sh:
# emu_build_driver TMP BINARY... builds the emulated libcuda.so.1 (from
# driver.cpp, with every kernel of the committed PTX compiled for the CPU)
# and cuBLAS (libcublas.so.12, from cublas.cpp) into TMP/lib, with a stub
# that fails naming itself for every other driver symbol the given binaries
# link. Run from the repository root; needs g++, gcc and nm.

emu=scripts/kernel_emu
cxx=(g++ -std=c++20 -O2 -fPIC -ffp-contract=off -w -DWICK_ROWTHREADS=32)

emu_build_driver() {
	local tmp=$1
	shift
	mkdir -p "$tmp/lib"
	# the kernel table: every .entry of the committed PTX
	grep -oE '\.entry [a-z0-9_]+' cuda/kernels.ptx | awk '{print "K(" $2 ")"}' >"$tmp/kernels.inc"
	"${cxx[@]}" -I"$tmp" -c "$emu/driver.cpp" -o "$tmp/driver.o"
	# a stub for every other driver symbol the binaries link
	nm -D --undefined-only "$@" | awk '$2 ~ /^cu[A-Z]/ {print $2}' | sort -u >"$tmp/wanted"
	nm --defined-only -g "$tmp/driver.o" | awk '{print $3}' | sort -u >"$tmp/have"
	comm -23 "$tmp/wanted" "$tmp/have" | awk '
		BEGIN { print "#include <stdio.h>" }
		{ printf "int %s(void) { fputs(\"emulated CUDA driver: %s is not emulated\\n\", stderr); return 801; }\n", $1, $1 }
	' >"$tmp/stubs.c"
	gcc -O1 -fPIC -c "$tmp/stubs.c" -o "$tmp/stubs.o"
	"${cxx[@]}" -shared -Wl,-soname,libcuda.so.1 "$tmp/driver.o" "$tmp/stubs.o" -o "$tmp/lib/libcuda.so.1"
	"${cxx[@]}" -O3 -shared -Wl,-soname,libcublas.so.12 "$emu/cublas.cpp" "$tmp/lib/libcuda.so.1" -o "$tmp/lib/libcublas.so.12"
}

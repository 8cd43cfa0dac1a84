# tilec: tile-language kernel generator.
#   make            build/tilec, build/libtilec.a and build/libtilec.so (installs missing Debian packages as root)
#   make test       Check suites, normal build and ASan/UBSan build
#   make demo       gemm.tile: its CUDA C (build/demo/), CuTe layouts, CPU run checked, Python, GPU run if any
#   make fuzz       libFuzzer on the front end (FUZZ_SECONDS, default 60)
#   make fuzz-diff  random tile programs through tilec_run (FUZZ_SECONDS, FUZZ_SEED; build/fuzz-diff/)
#   make bench      front-end / algebra speed benchmarks (not timed tests)
#   UPDATE_GOLDEN=1 make test   rewrite golden files (review with git diff)

CUDA     ?= /usr/local/cuda
PREFIX   ?= /usr/local
O        ?= build
GS       := build/src
SAN      ?=
LEMON    ?= lemon
RE2C     ?= re2c
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= 1
# Debian's Python, where python3-numpy installs (python/ tests, make demo)
PYTHON   ?= $(shell [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CSTD     := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
ifeq ($(SAN),1)
CFLAGS   := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDSAN    := -fsanitize=address,undefined
endif
# gen/ has a folder per stage: util, front (parse, sema, inlining), ir, infer, layout, lower, lir,
# emit, pipeline (the compile API and the pass manager), target, cli
GEN_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard gen/*/*.c gen/*/*.h gen/*/*/*.c gen/*/*/*.h))))
CPPFLAGS := $(addprefix -I,$(GEN_DIRS)) -Icpu -Iruntime -I$(GS)
# tilec_run (cpu/run.c) arrives with the interpreter and the CPU header; until then the
# differential tests stop after emission
ifneq ($(wildcard cpu/run.c),)
CPPFLAGS += -DTILEC_HAVE_RUN=1
endif
GENWARN  := -Wno-unused-variable -Wno-unused-parameter -Wno-missing-prototypes -Wno-unused-but-set-variable
LDLIBS   := -ldl -lm -lpthread
# every object is position-independent, so one set makes libtilec.a and libtilec.so
PIC      := -fPIC

# ---- sources -------------------------------------------------------------
LIB_SRC  := $(filter-out gen/cli/main.c,$(wildcard gen/*/*.c gen/*/*/*.c)) $(wildcard cpu/*.c) $(wildcard runtime/*.c)
HDRS     := $(wildcard gen/*/*.h gen/*/*/*.h cpu/*.h runtime/*.h)
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/obj/%.o)
ifneq ($(wildcard grammar/parser.y),)
LIB_OBJ  += $(O)/obj/gs/parser.o $(O)/obj/gs/lexer.o
GEN_HDRS := $(GS)/parser.h
endif
TPL      := $(wildcard templates/*)
LIB_OBJ  += $(O)/obj/gs/templates.o
TEST_SRC := $(wildcard test/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(O)/obj/%.o)

all: deps $(O)/tilec $(O)/libtilec.a $(O)/libtilec.so

# ---- dependencies: install what is missing on a fresh Debian machine -------
DEPS_STAMP := build/.deps
deps: $(DEPS_STAMP)
# re-checked when the Makefile changes (a new dependency reaches existing clones too)
$(DEPS_STAMP): Makefile
	@mkdir -p build
	@missing=""; \
	command -v $(LEMON) >/dev/null || missing="$$missing lemon"; \
	command -v $(RE2C) >/dev/null || missing="$$missing re2c"; \
	command -v pkg-config >/dev/null || missing="$$missing pkg-config"; \
	pkg-config --exists check 2>/dev/null || missing="$$missing check"; \
	[ -f /usr/include/hip/hiprtc.h ] || missing="$$missing libamdhip64-dev"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	command -v cmake >/dev/null || missing="$$missing cmake"; \
	$(PYTHON) -c 'import numpy' 2>/dev/null || missing="$$missing python3-numpy"; \
	$(PYTHON) -c 'import setuptools' 2>/dev/null || missing="$$missing python3-setuptools"; \
	$(PYTHON) -c 'import ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	command -v clang-19 >/dev/null && command -v ld.lld-19 >/dev/null && command -v llvm-objdump-19 >/dev/null \
	  || missing="$$missing clang-19 lld-19 llvm-19"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing) >build/apt.log 2>&1 \
	      || { cat build/apt.log; echo "error: apt-get install$$missing failed"; exit 1; }; \
	  else \
	    echo "error: missing$$missing; run: sudo apt-get install$$missing"; exit 1; \
	  fi; \
	fi
	@touch $@

# ---- generated sources ---------------------------------------------------
.DELETE_ON_ERROR:
$(GS):
	@mkdir -p $@
$(GS)/parser.h: $(GS)/parser.c
$(GS)/parser.c: grammar/parser.y | $(GS) $(DEPS_STAMP)
	$(LEMON) -q -d$(GS) -T/usr/share/lemon/lempar.c grammar/parser.y
$(GS)/lexer.c: grammar/lexer.re $(GS)/parser.h | $(GS) $(DEPS_STAMP)
	$(RE2C) -W -Werror --no-generation-date --no-version -o $@ grammar/lexer.re
# every file of templates/ becomes a C string: tpl_<name with . and - as _>; an
# #include "tilec_portable.h" line is replaced by that file, so each string stands alone
$(GS)/templates.c: $(TPL) | $(GS)
	@{ echo '/* generated from templates/ by the Makefile; do not edit */'; \
	  echo '#include <stddef.h>'; echo '#include <string.h>'; \
	  for f in $(TPL); do n=$$(basename $$f | tr '.-' '__'); \
	    echo "const char tpl_$$n[] ="; \
	    awk '/^#include "tilec_portable.h"/ { while ((getline l < "templates/tilec_portable.h") > 0) print l; next } { print }' $$f | \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$$/\\n"/'; echo ';'; done; \
	  echo 'const char *tilec_template(const char *name);'; \
	  echo 'const char *tilec_template(const char *name) {'; \
	  for f in $(TPL); do n=$$(basename $$f); v=$$(echo $$n | tr '.-' '__'); \
	    echo "	if (!strcmp(name, \"$$n\")) return tpl_$$v;"; done; \
	  echo '	(void)name; return NULL; }'; } > $@
$(GS)/suites.h: $(wildcard test/check_*.c) | $(GS)
	@for f in $(sort $(wildcard test/check_*.c)); do n=$$(basename $$f .c); echo "SUITE($${n#check_})"; done > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

# ---- objects ---------------------------------------------------------------
$(O)/obj/test/%.o: CHECKFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
# the compiled evaluator's batch loops (gen/layout/iexpr.c, run()) vectorize under GCC's
# "cheap" cost model; -O2's "very-cheap" refuses the alias checks they need (generation of
# samples/flash_fwd.tile: 37.0M -> 33.8M instructions)
ifeq ($(findstring clang,$(shell $(CC) --version 2>/dev/null | head -n 1)),)
$(O)/obj/gen/layout/iexpr.o: FILEFLAGS = -fvect-cost-model=cheap
endif
$(O)/obj/%.o: %.c $(HDRS) $(GEN_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(PIC) $(WARN) $(CPPFLAGS) $(CHECKFLAGS) $(FILEFLAGS) -c -o $@ $<
$(O)/obj/gs/%.o: $(GS)/%.c $(HDRS) $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(PIC) $(WARN) $(GENWARN) $(CPPFLAGS) -c -o $@ $<
$(TEST_OBJ): $(GS)/suites.h

$(O)/libtilec.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
# the shared library (for Python's ctypes and other FFIs): the same objects, public
# symbols tilec_* only
$(O)/libtilec.so: $(LIB_OBJ)
	$(CC) -shared $(CFLAGS) $(LDSAN) -Wl,--version-script=runtime/libtilec.map -o $@ $^ $(LDLIBS)
$(O)/tilec: $(O)/obj/gen/cli/main.o $(O)/libtilec.a
	$(CC) $(CFLAGS) $(LDSAN) -o $@ $^ $(LDLIBS)
$(O)/check_tilec: $(TEST_OBJ) $(O)/libtilec.a
	$(CC) $(CFLAGS) $(LDSAN) -o $@ $^ $$(pkg-config --libs check) $(LDLIBS)

# ---- tests -----------------------------------------------------------------
# Check forks each test; CK_DEFAULT_TIMEOUT is raised for the sanitizer build.
test: deps
	$(MAKE) --no-print-directory O=build all build/check_tilec
	$(MAKE) --no-print-directory O=build test-run
	$(MAKE) --no-print-directory O=build/san SAN=1 all build/san/check_tilec
	$(MAKE) --no-print-directory O=build/san SAN=1 test-run
test-run: $(O)/api_cxx
	@echo "== check_tilec ($(O))"
	CK_DEFAULT_TIMEOUT=120 TILEC=$(O)/tilec ASAN_OPTIONS=detect_leaks=1 $(O)/check_tilec
	@if [ -x test/cli.sh ]; then TILEC=$(O)/tilec TILEC_CPU_STRICT=1 test/cli.sh; fi
	@echo "== every public header in one C++ file ($(O)/api_cxx)"
	ASAN_OPTIONS=detect_leaks=1 $(O)/api_cxx
	@if [ "$(SAN)" != 1 ]; then $(MAKE) --no-print-directory O=$(O) test-python test-cmake; fi

# every public header in one C++ file, with the strictest warnings (C: test/check_api.c)
PUBLIC_HDRS := $(filter-out runtime/tileglue.h runtime/rt.h,$(wildcard runtime/tilec*.h))
$(O)/api_cxx: test/api_cxx.cpp $(PUBLIC_HDRS) $(O)/libtilec.a
	$(CXX) -std=c++11 -O1 -g -Wall -Wextra -Werror -pedantic $(LDSAN) -Iruntime -o $@ test/api_cxx.cpp $(O)/libtilec.a $(LDLIBS)

# the Python package as a user installs it: pip install ./python into a venv in build/ (no
# network: --no-build-isolation --no-index, setuptools and NumPy from Debian), its libtilec.so
# copied from $(O); the tests and the quick start then import the installed package
test-python: $(O)/libtilec.so
	@echo "== python/: pip install ./python into build/pyvenv, then python/tests (NumPy, the CPU target)"
	@rm -rf build/pyvenv python/build
	$(PYTHON) -m venv --system-site-packages build/pyvenv
	TILEC_LIBRARY=$(CURDIR)/$(O)/libtilec.so build/pyvenv/bin/pip install -q --no-build-isolation --no-index ./python
	cd build && PYTHONDONTWRITEBYTECODE=1 pyvenv/bin/python -c 'import tilec; print("tilec", tilec.version(), "from", tilec.library())'
	cd build && PYTHONDONTWRITEBYTECODE=1 pyvenv/bin/python -m unittest discover -s ../python/tests
	cd build && PYTHONDONTWRITEBYTECODE=1 pyvenv/bin/python ../python/examples/quickstart_gemm.py

# the CMake sample against a staged install (find_package(tilec), tilec_add_kernel)
CMAKE_STAGE := $(CURDIR)/build/cmake-stage
test-cmake: $(O)/tilec $(O)/libtilec.a $(O)/libtilec.so
	@echo "== samples/cmake against make install DESTDIR=build/cmake-stage PREFIX=/usr"
	@rm -rf build/cmake-stage build/cmake-sample
	@$(MAKE) --no-print-directory install DESTDIR=$(CMAKE_STAGE) PREFIX=/usr >build/cmake-install.log
	cmake -S samples/cmake -B build/cmake-sample -DCMAKE_PREFIX_PATH=$(CMAKE_STAGE)/usr >build/cmake-configure.log \
	  || { cat build/cmake-configure.log; exit 1; }
	@grep -E "tilec|CUDA" build/cmake-configure.log
	cmake --build build/cmake-sample -j2 >build/cmake-build.log || { cat build/cmake-build.log; exit 1; }
	test -s build/cmake-sample/tilec/gemm.cu && test -s build/cmake-sample/tilec/gemm.h
	build/cmake-sample/cpu_check samples/gemm.tile
	@if [ -x build/cmake-sample/gemm_gpu ]; then \
	  if ! /sbin/ldconfig -p | grep -q 'libcuda\.so\.1 '; then echo "gemm_gpu: built with nvcc; no NVIDIA driver here, not run"; \
	  else build/cmake-sample/gemm_gpu; rc=$$?; \
	    if [ $$rc = 77 ]; then echo "gemm_gpu: built; no GPU here (exit 77)"; else exit $$rc; fi; fi; fi
	@echo "== samples/cmake without CUDA (-DTILEC_SAMPLE_NO_CUDA=ON): the kernel generated, not compiled"
	@rm -rf build/cmake-sample-nocuda
	cmake -S samples/cmake -B build/cmake-sample-nocuda -DCMAKE_PREFIX_PATH=$(CMAKE_STAGE)/usr \
	  -DTILEC_SAMPLE_NO_CUDA=ON >build/cmake-configure.log || { cat build/cmake-configure.log; exit 1; }
	cmake --build build/cmake-sample-nocuda -j2 >build/cmake-build.log || { cat build/cmake-build.log; exit 1; }
	test -s build/cmake-sample-nocuda/tilec/gemm.cu && grep -q 'tilec_launch_gemm' build/cmake-sample-nocuda/tilec/gemm.h

golden:
	UPDATE_GOLDEN=1 $(MAKE) --no-print-directory O=build all build/check_tilec test-run

# the gemm sample: its CUDA C and launcher header written to build/demo/, the inferred layouts
# in CuTe notation, a run on the CPU target checked against the reference interpreter, and a
# GPU run (samples/host_jit.c: JIT, launch, check against a CPU reference) when a driver is there
demo: all build/host_jit
	@mkdir -p build/demo
	@$(O)/tilec samples/gemm.tile -o build/demo/gemm.cu --header build/demo/gemm.h
	@echo "== the CUDA C of samples/gemm.tile: build/demo/gemm.cu ($$(wc -l <build/demo/gemm.cu) lines), its launchers: build/demo/gemm.h"
	@echo "   (tilec samples/gemm.tile -o build/demo/gemm.cu --header build/demo/gemm.h; the kernel's first lines:)"
	@sed -n '/^extern "C"/,$$p' build/demo/gemm.cu | head -25
	@echo "   ..."
	@echo "== the inferred layouts in CuTe notation (tilec --dump=layouts samples/gemm.tile; docs/cute.md)"
	@$(O)/tilec --dump=layouts samples/gemm.tile | awk '/^  [a-z]/ { what = $$0 } /cute:/ { sub(/^ +/, "", what); sub(/^ +cute: /, ""); printf "  %-28s %s\n", what, $$0 }'
	@echo "== on the CPU target: the emitted CUDA C built with c++ against tilec_cpu.h, checked against the reference interpreter"
	$(O)/tilec run samples/gemm.tile --sizes "M=200,N=203,K=205;M=256,N=384,K=512" -v
	@echo "== the same from Python (python/examples/quickstart_gemm.py, the package in python/)"
	@PYTHONPATH=python TILEC_LIBRARY=$(O)/libtilec.so PYTHONDONTWRITEBYTECODE=1 $(PYTHON) python/examples/quickstart_gemm.py
	@echo "== on the GPU (NVRTC JIT + launch + check; skipped without an NVIDIA driver)"
	@build/host_jit samples/gemm.tile; rc=$$?; \
	  if [ $$rc = 77 ]; then echo "   no NVIDIA GPU here: not run"; elif [ $$rc != 0 ]; then exit $$rc; fi

# ---- fuzzing (clang + libFuzzer from Debian) ------------------------------
# Debian's clang-14 with its libFuzzer/sanitizer runtime (libclang-rt-14-dev); clang-19 from the
# deps above has no runtime package installed, so it is not used here unless FUZZ_CC says so
FUZZ_CC ?= clang-14
FUZZERS := frontend cute layout cache
# seeds too slow for the instrumented build: softmax.tile takes 1.6 s in layout inference in
# the normal build and over 60 s under libFuzzer + ASan + UBSan (a cost bound, not a crash)
FUZZ_SLOW_SEEDS := samples/softmax.tile
fuzz: deps
	@if [ "$(FUZZ_CC)" = clang-14 ] && ! { command -v clang-14 >/dev/null && \
	    ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; }; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get install -y -qq clang-14 libclang-rt-14-dev >/dev/null; \
	  else echo "error: install clang-14 libclang-rt-14-dev (apt-get)"; exit 1; fi; fi
	$(MAKE) --no-print-directory O=build/fuzz CC=$(FUZZ_CC) OPT="-O1" \
	  CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined" build/fuzz/libtilec.a
	@for h in $(FUZZERS); do \
	  echo "$(FUZZ_CC) ... -o build/fuzz/fuzz_$$h test/fuzz/fuzz_$$h.c build/fuzz/libtilec.a"; \
	  $(FUZZ_CC) $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined $(CPPFLAGS) \
	    -o build/fuzz/fuzz_$$h test/fuzz/fuzz_$$h.c build/fuzz/libtilec.a $(LDLIBS) || exit 1; \
	done
	@rm -rf build/fuzz/seeds && mkdir -p build/fuzz/seeds/frontend build/fuzz/seeds/cute \
	  build/fuzz/seeds/layout build/fuzz/seeds/cache && \
	  for f in $$(find samples test -name '*.tile' | sort | grep -v -x -F "$(FUZZ_SLOW_SEEDS)"); do \
	    cp "$$f" "build/fuzz/seeds/frontend/$$(echo "$$f" | tr / _)"; done && \
	  i=0; while IFS= read -r l; do i=$$((i+1)); printf '%s\n' "$$l" > build/fuzz/seeds/cute/$$i; \
	    done < test/fuzz/cute.seeds; \
	  i=0; while IFS= read -r l; do i=$$((i+1)); printf '%s' "$$l" | tr ' ' '\n' > build/fuzz/seeds/layout/$$i; \
	    done < test/fuzz/layout.seeds
	@for h in $(FUZZERS); do mkdir -p build/fuzz/corpus-$$h; done
	@# FUZZ_SECONDS in all: half to the compiler, the rest split between the other three.
	@# The compiler runs in fork mode: an input over 60 s (layout enumeration and the CuTe
	@# comments of the emitter can take that long instrumented) is kept as build/fuzz/slow-frontend/
	@# timeout-* and fuzzing goes on; a crash still stops it with a failure.
	@t=$(FUZZ_SECONDS); f=$$((t / 2)); o=$$(((t - f) / 3)); [ $$o -ge 1 ] || o=1; \
	  set -e; \
	  echo "== fuzz_frontend $$f s"; \
	  mkdir -p build/fuzz/slow-frontend; \
	  build/fuzz/fuzz_frontend -fork=1 -ignore_timeouts=1 -max_total_time=$$f -max_len=8192 \
	    -timeout=60 -rss_limit_mb=4096 -artifact_prefix=build/fuzz/slow-frontend/ \
	    build/fuzz/corpus-frontend build/fuzz/seeds/frontend; \
	  ls build/fuzz/slow-frontend | grep -q timeout && \
	    echo "fuzz_frontend: inputs over 60 s (a cost bound, kept, not a failure):" && \
	    ls build/fuzz/slow-frontend/timeout-*; \
	  echo "== fuzz_cute $$o s"; \
	  build/fuzz/fuzz_cute -max_total_time=$$o -max_len=512 -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/ \
	    build/fuzz/corpus-cute build/fuzz/seeds/cute; \
	  echo "== fuzz_layout $$o s"; \
	  build/fuzz/fuzz_layout -max_total_time=$$o -max_len=512 -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/ \
	    build/fuzz/corpus-layout build/fuzz/seeds/layout; \
	  echo "== fuzz_cache $$o s"; \
	  FUZZ_CACHE_SEEDS=build/fuzz/seeds/cache build/fuzz/fuzz_cache -max_total_time=$$o \
	    -max_len=4096 -timeout=10 -print_final_stats=1 -artifact_prefix=build/fuzz/ \
	    build/fuzz/corpus-cache build/fuzz/seeds/cache

# ---- differential fuzzing: random programs (cpu/progen.c), interpreter vs emitted code ----
$(O)/fuzz_diff: test/fuzz/fuzz_diff.c test/progen_check.h $(O)/libtilec.a $(HDRS)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) $(CPPFLAGS) $(LDSAN) -o $@ test/fuzz/fuzz_diff.c $(O)/libtilec.a $(LDLIBS)
fuzz-diff: deps $(O)/tilec $(O)/fuzz_diff
	$(O)/fuzz_diff -t $(FUZZ_SECONDS) -s $(FUZZ_SEED) -o build/fuzz-diff

# ---- benchmarks ------------------------------------------------------------
bench: all
	@for b in test/bench/*.sh; do [ -x $$b ] && TILEC=build/tilec $$b; done; true

# ---- samples/host_jit.c: JIT gemm on a GPU (exit 77 without a driver) ----
host_jit: build/host_jit
build/host_jit: samples/host_jit.c build/libtilec.a runtime/tilec_tile.h
	$(CC) $(CSTD) -O2 $(WARN) -Iruntime -o $@ samples/host_jit.c build/libtilec.a -ldl -lpthread -lm

# ---- install ---------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 755 build/tilec $(DESTDIR)$(PREFIX)/bin/
	install -m 644 build/libtilec.a build/libtilec.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(PREFIX)/include/
	install -m 644 templates/tilec_cuda.h templates/tilec_portable.h $(DESTDIR)$(PREFIX)/include/
	v=$$(build/tilec --version | sed 's/^tilec //'); \
	sed -e 's|@PREFIX@|$(PREFIX)|' -e "s|@VERSION@|$$v|" tilec.pc.in >build/tilec.pc; \
	sed -e "s|@VERSION@|$$v|" cmake/tilecConfig.cmake.in >build/tilecConfig.cmake; \
	sed -e "s|@VERSION@|$$v|" cmake/tilecConfigVersion.cmake.in >build/tilecConfigVersion.cmake
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/tilec
	install -m 644 build/tilec.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 644 build/tilecConfig.cmake build/tilecConfigVersion.cmake $(DESTDIR)$(PREFIX)/lib/cmake/tilec/

clean:
	rm -rf build/obj build/san build/fuzz build/src build/tilec build/libtilec.a build/libtilec.so \
	  build/check_tilec build/api_cxx build/pyvenv python/build build/cmake-stage build/cmake-sample build/cmake-sample-nocuda

.PHONY: host_jit all deps test test-run test-python test-cmake golden demo fuzz fuzz-diff bench install clean

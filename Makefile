# tilec: tile-language kernel generator.
#   make            build/tilec and build/libtilec.a (installs missing Debian packages as root)
#   make test       Check suites, normal build and ASan/UBSan build
#   make demo       the CUDA C of samples/gemm.tile, and its CPU run against the interpreter
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

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CSTD     := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
ifeq ($(SAN),1)
CFLAGS   := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDSAN    := -fsanitize=address,undefined
endif
CPPFLAGS := -Igen -Icpu -Iruntime -I$(GS)
# tilec_run (cpu/run.c) arrives with the interpreter and the CPU header; until then the
# differential tests stop after emission
ifneq ($(wildcard cpu/run.c),)
CPPFLAGS += -DTILEC_HAVE_RUN=1
endif
GENWARN  := -Wno-unused-variable -Wno-unused-parameter -Wno-missing-prototypes -Wno-unused-but-set-variable
LDLIBS   := -ldl -lm -lpthread

# ---- sources -------------------------------------------------------------
LIB_SRC  := $(filter-out gen/main.c,$(wildcard gen/*.c)) $(wildcard cpu/*.c) $(wildcard runtime/*.c)
HDRS     := $(wildcard gen/*.h cpu/*.h runtime/*.h)
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/obj/%.o)
ifneq ($(wildcard grammar/parser.y),)
LIB_OBJ  += $(O)/obj/gs/parser.o $(O)/obj/gs/lexer.o
GEN_HDRS := $(GS)/parser.h
endif
TPL      := $(wildcard templates/*)
LIB_OBJ  += $(O)/obj/gs/templates.o
TEST_SRC := $(wildcard test/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(O)/obj/%.o)

all: deps $(O)/tilec $(O)/libtilec.a

# ---- dependencies: install what is missing on a fresh Debian machine -------
DEPS_STAMP := build/.deps
deps: $(DEPS_STAMP)
$(DEPS_STAMP):
	@mkdir -p build
	@missing=""; \
	command -v $(LEMON) >/dev/null || missing="$$missing lemon"; \
	command -v $(RE2C) >/dev/null || missing="$$missing re2c"; \
	command -v pkg-config >/dev/null || missing="$$missing pkg-config"; \
	pkg-config --exists check 2>/dev/null || missing="$$missing check"; \
	[ -f /usr/include/hip/hiprtc.h ] || missing="$$missing libamdhip64-dev"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
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
$(O)/obj/%.o: %.c $(HDRS) $(GEN_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) $(CPPFLAGS) $(CHECKFLAGS) -c -o $@ $<
$(O)/obj/gs/%.o: $(GS)/%.c $(HDRS) $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(WARN) $(GENWARN) $(CPPFLAGS) -c -o $@ $<
$(TEST_OBJ): $(GS)/suites.h

$(O)/libtilec.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(O)/tilec: $(O)/obj/gen/main.o $(O)/libtilec.a
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
test-run:
	@echo "== check_tilec ($(O))"
	CK_DEFAULT_TIMEOUT=120 TILEC=$(O)/tilec ASAN_OPTIONS=detect_leaks=1 $(O)/check_tilec
	@if [ -x test/cli.sh ]; then TILEC=$(O)/tilec test/cli.sh; fi

golden:
	UPDATE_GOLDEN=1 $(MAKE) --no-print-directory O=build all build/check_tilec test-run

# the gemm sample: its CUDA C (the first lines), then run on the CPU both ways and compared
demo: all
	@echo "== tilec --dump=cuda samples/gemm.tile (first 60 lines)"
	@$(O)/tilec --dump=cuda samples/gemm.tile | head -60
	@echo "== tilec run samples/gemm.tile: the reference interpreter against the emitted CUDA C on the CPU"
	$(O)/tilec run samples/gemm.tile --sizes "M=200,N=203,K=205;M=256,N=384,K=512" -v

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
	install -m 644 build/libtilec.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 runtime/tilec*.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 templates/tilec_cuda.h templates/tilec_portable.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e "s|@VERSION@|$$(build/tilec --version | sed 's/^tilec //')|" \
	  tilec.pc.in >build/tilec.pc
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 build/tilec.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/

clean:
	rm -rf build/obj build/san build/fuzz build/src build/tilec build/libtilec.a build/check_tilec

.PHONY: host_jit all deps test test-run golden demo fuzz fuzz-diff bench install clean

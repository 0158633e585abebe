# profgate: build, test, bench. Out-of-tree in build/; quiet unless V=1.
#   make            build build/profgate
#   make check      install missing deps, build, run every test, then again under ASan+UBSan
#   make demo       run the main job on the bundled example profiles
#   make bench      speed and memory against reference tools, side by side
#   make install    PREFIX=/usr/local DESTDIR=
# DEVELOPER=1 adds -Werror (CI sets it); SANITIZE=address,undefined builds with sanitizers.

VERSION := 0.1.0
PREFIX ?= /usr/local
BUILD ?= build
CC ?= cc
PKGS := libgit2 libcurl libcjson zlib libprotobuf-c

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Wformat=2
ifeq ($(DEVELOPER),1)
WARN += -Werror
endif
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -DPG_VERSION='"$(VERSION)"' $(WARN) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP
LDLIBS := $(PKG_LIBS) -lpthread -lm
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -DPG_DEBUG_ARENA
LDFLAGS += -fsanitize=$(SANITIZE)
endif

LIB_SRCS := $(sort $(wildcard src/util/*.c src/trace/*.c src/read/*.c src/analyze/*.c src/cmd/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/src/main.o
BIN := $(BUILD)/profgate

TEST_SRCS := $(sort $(wildcard tests/unit/test_*.c))
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)

.PHONY: all check test demo bench install deps clean format check-format
all: $(BIN)

$(BUILD)/%.o: %.c $(BUILD)/CFLAGS
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# Rebuild everything when the flags change.
$(BUILD)/CFLAGS: FORCE
	@mkdir -p $(BUILD)
	@echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(LDLIBS)' | cmp -s - $@ || echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(LDLIBS)' > $@
FORCE:

$(BIN): $(LIB_OBJS) $(MAIN_OBJ)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS) $(BUILD)/CFLAGS
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS) -lcmocka

$(BUILD)/tools/%: tests/tools/%.c $(LIB_OBJS) $(BUILD)/CFLAGS
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TOOL    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

deps:
	@sh scripts/deps.sh

# The test command of the README: deps, a normal build with -Werror, every
# test, then the same tests against an ASan+UBSan build.
check: deps
	$(Q)$(MAKE) --no-print-directory DEVELOPER=1 test
	$(Q)$(MAKE) --no-print-directory DEVELOPER=1 BUILD=$(BUILD)/asan SANITIZE=address,undefined CFLAGS="-O1 -g" test
	$(Q)$(MAKE) --no-print-directory check-format

test: $(BIN) $(TEST_BINS) $(TOOL_BINS)
	$(Q)sh tests/run.sh $(BUILD)

demo: deps
	$(Q)$(MAKE) --no-print-directory $(BIN)
	$(Q)sh tests/demo.sh $(BUILD)

bench: deps
	$(Q)$(MAKE) --no-print-directory $(BIN) $(TOOL_BINS)
	$(Q)sh tests/bench/run.sh $(BUILD)

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/profgate/thresholds
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/profgate

format:
	clang-format -i $(LIB_SRCS) src/main.c src/*/*.h $(TEST_SRCS) $(TOOL_SRCS)

check-format:
	@if command -v clang-format >/dev/null 2>&1; then \
	  bad=$$(for f in $(LIB_SRCS) src/main.c src/*/*.h $(TEST_SRCS) $(TOOL_SRCS); do \
	    clang-format --dry-run -Werror $$f >/dev/null 2>&1 || echo $$f; done); \
	  if [ -n "$$bad" ]; then echo "clang-format: not formatted: $$bad"; echo "run 'make format'"; exit 1; fi; \
	  echo "format: ok"; \
	else echo "format: clang-format not installed, skipped"; fi

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

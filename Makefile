# odepkg — top-level targets.  `make demo` and `make check` bootstrap their
# own dependencies on Debian (apt-get install of what is missing).
SHELL      := /bin/bash
OCTAVE     ?= octave-cli
PKG_NAME   := odepkg
VERSION    := $(shell sed -n 's/^Version: *//p' DESCRIPTION)
TARBALL    := build/$(PKG_NAME)-$(VERSION).tar.gz
# Throwaway HOME so `pkg install -local` never touches the user's (or, as
# root, the global) package list.
PKG_HOME   := $(CURDIR)/build/home
# fonts-freefont-otf (the FreeSans that Octave's text renderer loads for every
# axes) and ghostscript (print -dpng goes through gs): recommendations of
# octave that --no-install-recommends leaves out; on a fresh machine without
# them no figure renders ("ft_text_renderer: invalid bounding box", then
# "'gs' (Ghostscript) binary is required").  octave-parallel: the tests of
# odepkg_sweep (parcellfun workers, a pserver on the loopback interface);
# the package itself does not depend on it (loaded on demand).
# octave-symbolic and python3-sympy: odepkg_model (native models) derives
# and writes its C kernels with SymPy; loaded by pkg load odepkg when
# installed (PKG_ADD), optional otherwise.
DEB_PKGS   := octave liboctave-dev libeigen3-dev googletest cmake g++ make pkg-config gnuplot-nox \
              fonts-freefont-otf ghostscript octave-parallel octave-symbolic python3-sympy
RUN_OCT     = HOME=$(PKG_HOME) $(OCTAVE) --norc --no-gui

.PHONY: all deps build dist install install-core demo figures check check-core check-octave bench fuzz sanitize valgrind clean

all: build

deps:
	@bash tools/bootstrap.sh $(DEB_PKGS)

build: deps
	$(MAKE) -C src -j2

# What the package is made of: a change to any of these re-makes the tarball
# and the install; otherwise `make demo` then `make check` install once.
PKG_SOURCES := $(shell find . -path ./build -prune -o -path ./.git -prune -o -path ./test/build -prune \
                 -o -path ./src/PKG_ADD -prune -o -path ./src/PKG_DEL -prune \
                 -o -type f ! -name '*.o' ! -name '*.oct' ! -name '*-tst' -print)
INSTALLED   := $(PKG_HOME)/.odepkg-installed

# The tarball is what users install from a release: the committed tree plus
# the working copy's changes, without build products.
dist: $(TARBALL)
$(TARBALL): $(PKG_SOURCES) | deps
	@mkdir -p build
	tar --exclude-vcs --exclude='./build' --exclude='*.o' --exclude='*.oct' \
	    --exclude='*.a' --exclude='*-tst' --exclude='./test/build' \
	    --exclude='./src/PKG_ADD' --exclude='./src/PKG_DEL' \
	    --transform 's,^\.,$(PKG_NAME),' -czf $(TARBALL) .

# pkg install runs make in src/ (as many jobs as cores); the stamp makes a
# second `make install` (make check after make demo) a no-op while nothing
# changed.
install: $(INSTALLED)
$(INSTALLED): $(TARBALL)
	@mkdir -p $(PKG_HOME)
	@echo "pkg install -local $(TARBALL): compiles one oct-file, about 2 minutes on 2 free cores (4 on one or on a busy machine)"
	$(RUN_OCT) --eval 'pkg install -local $(TARBALL)'
	@touch $@

# The Octave-free C++ core as a CMake package (headers + odepkg_coreConfig):
# find_package(odepkg_core CONFIG) and the target odepkg::core (README).
PREFIX ?= /usr/local
install-core: deps
	cmake -S src/core -B build/core-lib > /dev/null
	cmake --install build/core-lib --prefix $(PREFIX)

# The Kepler example, then every solver's %!demo rendered headless to
# build/figures/*.png (octave --no-gui with gnuplot: octave-cli has no
# graphics toolkit), each PNG checked to be non-trivial.  make check reuses
# the figures while the install they were drawn from is unchanged.
FIGURES := build/figures/.rendered
demo: install
	$(RUN_OCT) --eval 'addpath ("test"); pkg load odepkg; run_demo_kepler ()'
	@$(MAKE) --no-print-directory figures

figures: $(FIGURES)
$(FIGURES): $(INSTALLED)
	@rm -f $@
	HOME=$(PKG_HOME) octave --norc --no-gui --eval 'pkg load odepkg; addpath ("tools"); exit (render_figures ("build/figures") > 0)'
	@touch $@

check: deps
	@bash tools/check.sh

check-core: deps
	cmake -S test -B build/core -DCMAKE_BUILD_TYPE=Release > /dev/null
	$(MAKE) -C build/core -j2
	cd build/core && ctest --output-on-failure

check-octave: install
	$(RUN_OCT) --eval 'addpath ("test"); pkg load odepkg; [~, nf] = run_package_tests (); exit (nf > 0)'

# Seeded fuzzing of every entry point against the installed package:
# SEED=n CALLS=n make fuzz (default 1 and 10000); see tools/fuzz/run_fuzz.sh.
SEED  ?= 1
CALLS ?= 10000
fuzz: install
	@bash tools/fuzz/run_fuzz.sh $(SEED) $(CALLS)

# Sanitizers (ASan + UBSan: Google Tests, oct-files, the Octave suite) and
# valgrind memcheck (Google Tests); see tools/sanitize.sh, tools/valgrind.sh.
sanitize: deps
	@bash tools/sanitize.sh

valgrind: deps
	@bash tools/bootstrap.sh valgrind
	@bash tools/valgrind.sh

bench: install
	HOME=$(PKG_HOME) bash bench/run.sh

clean:
	$(MAKE) -C src clean
	rm -rf build

# SPDX-License-Identifier: GPL-2.0
#
# srff top-level Makefile.
#
#   make              build the module (srff_nf/srff.ko) and srffctl
#   make test         install what is missing, build, run every test
#                     (native suites, then the kernel suite in a VM)
#   make test-debug   the kernel suite in a KASAN/lockdep/kmemleak build of
#                     Debian's 6.1 kernel, plus the uaf canary (PATTERN=...;
#                     builds that kernel first: 20-30 min, then cached)
#   make demo         the three-file FTP experiment in the VM, prints its table
#   make experiments  the FTP and open-loop web experiments (WEB_QUICK=1: quick)
#   make bench        per-packet cost and scale (native and in the guest)
#   make fuzz         libFuzzer on the flow-key parser (FUZZ_SECONDS=60)
#   make deps         only install the dependencies (Debian 12, as root)
#   make install      install srff.ko via DKMS (every installed kernel, or
#                     KVER=...), srffctl, srff-qdisc, srff-check, their man
#                     pages and srff(8), srff.conf(5), the systemd units (not
#                     enabled) and samples
#   make uninstall    remove what make install put down (dkms remove --all too)
#   make deb          the Debian packages srff-dkms and srffctl in build/deb/
#                     (dpkg-buildpackage in a temporary copy of the tree)

# The kernel `make` builds srff.ko for: the running one (a server: `make`,
# then insmod; without its headers `make module` says which package to
# install), or, when the running kernel is not installed on this machine at
# all (a container, the build machines' sandbox), the Debian kernel the tests
# boot (scripts/kver.sh). The
# targets that run the module in a VM always build for the kernel they boot.
# KVER=... or KDIR=... overrides.
# (RUNNING_KVER and MODULES_DIR are there for tests/dkms.sh, which checks
# the choice on made-up machines.)
ifeq ($(origin RUNNING_KVER),undefined)
RUNNING_KVER := $(shell uname -r)
endif
MODULES_DIR ?= /lib/modules
# KVER as the user gave it (command line or environment), before the default
# below: `make install` builds for every installed kernel unless one is named.
USER_KVER := $(if $(filter undefined,$(origin KVER)),,$(KVER))
TEST_KVER = $(shell . scripts/kver.sh >/dev/null 2>&1 && echo $$KVER)
ifeq ($(origin KVER),undefined)
ifneq ($(wildcard $(MODULES_DIR)/$(RUNNING_KVER)/build),)
KVER := $(RUNNING_KVER)
else ifneq ($(wildcard $(MODULES_DIR)/$(RUNNING_KVER)/kernel),)
# A server whose running kernel is installed here without its headers: a
# module built for another kernel would only fail to load ("Invalid module
# format"), so `make module` stops and names the package to install.
KVER := $(RUNNING_KVER)
else
# The running kernel is not one installed here (a container's, or the build
# machines' sandbox kernel): build for the kernel the tests boot.
KVER := $(if $(TEST_KVER),$(TEST_KVER),$(RUNNING_KVER))
$(info srff: the running kernel $(RUNNING_KVER) is not installed here; building for $(if $(TEST_KVER),$(KVER) (the tests' kernel),no kernel: install the headers of the kernel srff will run on, or run make deps on a test machine))
endif
endif
FUZZ_SECONDS ?= 60
PREFIX ?= /usr/local

all: module srffctl

module:
	$(MAKE) -C srff_nf KVER=$(KVER) W=1 SRFF_WERROR=1

srffctl:
	$(MAKE) -C srffctl

user:
	$(MAKE) -C srff_nf/user

deps:
	scripts/deps.sh

test: deps
	$(MAKE) all KVER=$(TEST_KVER)
	tests/run

# srff.ko is built against the debug kernel by tests/run-debug itself, in a
# private tree; srffctl is the host binary.
test-debug: deps
	$(MAKE) srffctl
	tests/run-debug "$(PATTERN)"

check: all
	$(MAKE) -C srff_nf/user check
	$(MAKE) -C srffctl check
	tests/srff-qdisc.sh
	tests/srff-check.sh
	/usr/bin/python3 tests/docs.py

fuzz:
	$(MAKE) -C srff_nf/user fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

bench: deps
	$(MAKE) all KVER=$(TEST_KVER)
	bench/run

demo: deps
	$(MAKE) all KVER=$(TEST_KVER)
	experiments/demo.sh

experiments: deps
	$(MAKE) all KVER=$(TEST_KVER)
	experiments/run-all.sh

# Not beside the packages: packaging/local.sh check refuses when srff-dkms
# or srffctl is installed.
install: srffctl
	packaging/local.sh check
	KVER=$(USER_KVER) scripts/dkms-install.sh
	$(MAKE) -C srffctl install PREFIX=$(PREFIX)
	PREFIX=$(PREFIX) packaging/local.sh install

uninstall:
	PREFIX=$(PREFIX) packaging/local.sh uninstall

deb:
	packaging/build-deb.sh

clean:
	-$(MAKE) -C srff_nf KVER=$(KVER) clean
	-$(MAKE) -C srffctl clean
	-$(MAKE) -C srff_nf/user clean
	rm -rf tests/out

.PHONY: all module srffctl user deps test test-debug check fuzz bench demo experiments install uninstall deb clean

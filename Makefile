# SPDX-License-Identifier: GPL-2.0
#
# srff top-level Makefile.
#
#   make              build the module (srff_nf/srff.ko) and srffctl
#   make test         install what is missing, build, run every test
#                     (native suites, then the kernel suite in a VM)
#   make demo         the three-file FTP experiment in the VM, prints its table
#   make experiments  both experiments (FTP and busy web server)
#   make bench        per-packet cost and scale (native and in the guest)
#   make fuzz         libFuzzer on the flow-key parser (FUZZ_SECONDS=60)
#   make deps         only install the dependencies (Debian 12, as root)
#   make install      install srff.ko via DKMS and srffctl (+ man page)

KVER ?= $(shell . scripts/kver.sh >/dev/null 2>&1 && echo $$KVER)
FUZZ_SECONDS ?= 60
PREFIX ?= /usr/local

all: module srffctl

module:
	$(MAKE) -C srff_nf KVER=$(KVER) W=1

srffctl:
	$(MAKE) -C srffctl

user:
	$(MAKE) -C srff_nf/user

deps:
	scripts/deps.sh

test: deps
	$(MAKE) all
	tests/run

check: all
	$(MAKE) -C srff_nf/user check
	$(MAKE) -C srffctl check

fuzz:
	$(MAKE) -C srff_nf/user fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

bench: deps all
	bench/run

demo: deps all
	experiments/demo.sh

experiments: deps all
	experiments/run-all.sh

install: srffctl
	scripts/dkms-install.sh
	$(MAKE) -C srffctl install PREFIX=$(PREFIX)

clean:
	-$(MAKE) -C srff_nf clean
	-$(MAKE) -C srffctl clean
	-$(MAKE) -C srff_nf/user clean
	rm -rf tests/out

.PHONY: all module srffctl user deps test check fuzz bench demo experiments install clean

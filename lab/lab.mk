# Soft-RoCE lab targets; the top-level Makefile includes this file.
# Needs root (network namespace, taps), qemu (TCG; no KVM required) and the
# Debian packages lab/setup.sh installs on first use.
#
#   make lab           full run: 4 VMs, probe, rdmamesh vs perftest, sweep + gate
#   make lab-probe     2 VMs: `rdmamesh probe` between them
#   make lab-compare   2 VMs: the perftest ratio table only
#   make lab-sweep     4 VMs: workers, coordinator, gate
#   make lab-clean     4 VMs: LAB_CLEAN_RUNS (10) clean sweeps in a row, each
#                      through the gate with the shipped thresholds
#   make lab-faults    4 VMs: sweep through RDMA CM, fault cases and their table
#   make lab-churn     1 VM: 10,000 test sessions, leak check
#   make lab-scenario SCENARIO=FILE   fault scenario file(s) (lab/scenarios/*.yaml
#                      or your own; format in lab/README.md)
#   make lab-p7        4 VMs: rdmamesh sweep vs per-pair perftest (SuperBench
#                      ib-traffic style) wall time, 3 interleaved repetitions
#   make lab-smoke     the CI smoke: from nothing, 4 VMs, doctor, probe, ratio
#                      table, a sweep, three fault cases (lab/smoke.sh)
#   make lab-live      4 VMs: the always-on mesh, a port down and a netem loss
#                      flagged without a sweep (lab/live.sh)
#   make lab-setup     download/build the cached kernel and base initramfs only
#   make lab-down      stop leftover VMs and delete the lab namespace
#
# LAB_CACHE (default /var/cache/rdmamesh-lab) holds downloads and images;
# LAB_VMS, LAB_REPS, LAB_MTU and the others in lab/common.sh tune a run;
# LAB_BIN uses a prebuilt rdmamesh (built with -tags verbs) instead of
# building one.

LAB_VMS ?= 4
LAB_CLEAN_RUNS ?= 10
LAB_REPS ?= 5
LAB_SH := lab/lab.sh

.PHONY: lab lab-probe lab-compare lab-sweep lab-clean lab-faults lab-churn lab-scenario lab-smoke lab-p7 lab-live lab-setup lab-down

lab:
	LAB_REPS=$(LAB_REPS) bash $(LAB_SH) all $(LAB_VMS)

lab-probe:
	bash $(LAB_SH) probe

lab-compare:
	bash $(LAB_SH) compare $(LAB_REPS)

lab-sweep:
	bash $(LAB_SH) sweep $(LAB_VMS)

# LAB_CLEAN_RUNS clean sweeps in a row through the gate (default 10).
lab-clean:
	bash $(LAB_SH) clean $(LAB_CLEAN_RUNS)

lab-faults:
	bash $(LAB_SH) faults

lab-churn:
	bash $(LAB_SH) churn

lab-scenario:
	@test -n "$(SCENARIO)" || { echo "usage: make lab-scenario SCENARIO=lab/scenarios/loss-both.yaml (or a name, or several)"; exit 2; }
	bash $(LAB_SH) scenario $(SCENARIO)

lab-smoke:
	bash $(LAB_SH) smoke

lab-live:
	bash $(LAB_SH) live

lab-setup:
	bash lab/setup.sh

lab-down:
	bash $(LAB_SH) down

lab-p7:
	bash $(LAB_SH) p7 $(or $(P7_REPS),3)

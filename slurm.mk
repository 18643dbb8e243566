# make slurm-test: the Slurm prolog and epilog against a real Slurm (Debian's
# slurm-wlm 22.05 and munge, installed when missing): slurmctld and four
# slurmd on localhost, a demo coordinator, the docs' install steps run as
# written. Needs root; about a minute. See deploy/slurm/test/slurm-test.sh.
SLURM_TEST_GO ?= $(or $(GO),go)

.PHONY: slurm-test
slurm-test:
	# bin/rdmamesh, the path the docs' install step copies from.
	$(SLURM_TEST_GO) build -ldflags '$(LDFLAGS)' -o bin/rdmamesh ./cmd/rdmamesh
	bash deploy/slurm/test/slurm-test.sh

# make chaos: the multi-process fault test (rigs/chaos). 3 coordinators
# and 6 sim workers run as separate processes on loopback; scenarios kill the
# leader (10 seeded trials), kill a worker, partition a coordinator's raft
# links and restart every coordinator, print their figures, and fail on any
# violation. Then the same coordinators face CHAOS_SMALL_SCALE in-process
# control-mode workers (3 leader kills, worker kills, a partition mid-sweep;
# about half a minute; CHAOS_SMALL_SCALE=0 skips it). Needs neither root nor
# RDMA hardware; a few minutes on 2 cores.
#   make chaos CHAOS_ARGS='-seed 7 -trials 3 -scenarios ac -keep'
#
# make chaos-scale: chaos at scale, the benchmark-style run behind the table
# in rigs/chaos/README.md: 3 coordinator processes and CHAOS_SCALE
# (256) control-mode workers, 10 leader kills mid-sweep, worker kills and a
# partition mid-sweep, every cell of every sweep checked against what the
# workers answered. About 3 minutes at 256. The run stops itself (a
# violation) past CHAOS_MEM_MB of resident memory, its children included.
#   make chaos-scale CHAOS_SCALE=512 CHAOS_SCALE_ARGS='-trials 3'
CHAOS_GO          ?= $(or $(GO),go)
CHAOS_BIN         ?= $(or $(BIN),bin/rdmamesh)
CHAOS_ARGS        ?=
CHAOS_SMALL_SCALE ?= 64
CHAOS_SCALE       ?= 256
CHAOS_SCALE_ARGS  ?= -trials 10
CHAOS_MEM_MB      ?= 12288

.PHONY: chaos chaos-scale
chaos:
	$(CHAOS_GO) build -ldflags '$(LDFLAGS)' -o $(CHAOS_BIN) ./cmd/rdmamesh
	$(CHAOS_GO) run ./rigs/chaos/cmd/chaos -bin $(CHAOS_BIN) -mem-limit-mb $(CHAOS_MEM_MB) $(CHAOS_ARGS)
	@if [ "$(CHAOS_SMALL_SCALE)" != 0 ]; then \
	  echo "$(CHAOS_GO) run ./rigs/chaos/cmd/chaos -bin $(CHAOS_BIN) -scale $(CHAOS_SMALL_SCALE) -trials 3"; \
	  $(CHAOS_GO) run ./rigs/chaos/cmd/chaos -bin $(CHAOS_BIN) -mem-limit-mb $(CHAOS_MEM_MB) -scale $(CHAOS_SMALL_SCALE) -trials 3; \
	fi

chaos-scale:
	$(CHAOS_GO) build -ldflags '$(LDFLAGS)' -o $(CHAOS_BIN) ./cmd/rdmamesh
	$(CHAOS_GO) run ./rigs/chaos/cmd/chaos -bin $(CHAOS_BIN) -mem-limit-mb $(CHAOS_MEM_MB) -scale $(CHAOS_SCALE) $(CHAOS_SCALE_ARGS)

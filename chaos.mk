# make chaos: the multi-process fault test (internal/chaos). 3 coordinators
# and 6 sim workers run as separate processes on loopback; scenarios kill the
# leader (10 seeded trials), kill a worker, partition a coordinator's raft
# links and restart every coordinator, print their figures, and fail on any
# violation. Needs neither root nor RDMA hardware; a few minutes on 2 cores.
#   make chaos CHAOS_ARGS='-seed 7 -trials 3 -scenarios ac -keep'
CHAOS_GO   ?= $(or $(GO),go)
CHAOS_BIN  ?= $(or $(BIN),bin/rdmamesh)
CHAOS_ARGS ?=

.PHONY: chaos
chaos:
	$(CHAOS_GO) build -ldflags '$(LDFLAGS)' -o $(CHAOS_BIN) ./cmd/rdmamesh
	$(CHAOS_GO) run ./internal/chaos/cmd/chaos -bin $(CHAOS_BIN) $(CHAOS_ARGS)

# make idle-cost: what one idle worker costs its host in a large gossip pool
# (docs/scale.md, "Idle cost of a worker"). The real binary's
# worker joins pools of IDLE_MEMBERS simulated memberlist peers on loopback,
# with and without a gossip key (IDLE_KEYS), and its CPU and memory are read
# from /proc over one push/pull interval of each pool (3 min at 1,024). A
# Markdown table on stdout. The 1,024-member pools take a few minutes each
# to form on 2 cores; the harness stops itself past IDLE_MEM_MB of resident
# memory (the pool and the worker together).
#   make idle-cost IDLE_MEMBERS=1024 IDLE_KEYS=on IDLE_ARGS='-window 2m'
#   make idle-cost IDLE_MEMBERS=1024 IDLE_KEYS=on IDLE_ARGS=-live   (probing at the shipped live-mesh rates)
IDLE_GO      ?= $(or $(GO),go)
IDLE_BIN     ?= $(or $(BIN),bin/rdmamesh)
IDLE_MEMBERS ?= 1024,128,3
IDLE_KEYS    ?= off,on
IDLE_MEM_MB  ?= 8192
IDLE_ARGS    ?=

.PHONY: idle-cost
idle-cost:
	$(IDLE_GO) build -ldflags '$(LDFLAGS)' -o $(IDLE_BIN) ./cmd/rdmamesh
	$(IDLE_GO) run ./rigs/idle/cmd/idle-cost -bin $(IDLE_BIN) -members $(IDLE_MEMBERS) -keys $(IDLE_KEYS) -mem-limit-mb $(IDLE_MEM_MB) $(IDLE_ARGS)

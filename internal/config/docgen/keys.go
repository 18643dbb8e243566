package main

var sectionIntro = map[string]string{
	"log":         "Logging of every command (slog, to stderr).",
	"gossip":      "Membership over memberlist: how workers and coordinators find each other.",
	"worker":      "The per-node agent (`rdmamesh worker`).",
	"sim":         "The simulated fabric, used by `rdmamesh worker --fabric sim` and `rdmamesh demo`.",
	"coordinator": "The coordinator (`rdmamesh coordinator`): raft, sweeps, the API and UI.",
	"sweep":       "What one sweep measures; the coordinator's defaults, which a sweep request may override.",
	"demo":        "The one-process demo (`rdmamesh demo`).",
	"auth":        "Shared secrets for the APIs. Prefer the `_file` keys: values in the environment show up in process listings.",
	"tls":         "Optional TLS for the control plane: the coordinator API and UI, the worker API, forwarded writes and raft. Off unless `tls.cert_file` is set; then every coordinator and worker must have it on. The files are read at start, so a bad certificate stops the process with the key named.",
}

// descriptions says what each key does, in one line an operator can act on.
var descriptions = map[string]string{
	"log.level":  "`debug`, `info`, `warn` or `error`.",
	"log.format": "`text` (key=value) or `json` (one object per line, for log shippers).",

	"gossip.profile":   "Gossip failure-detection timers: `lan` (memberlist's LAN profile: a silent member is dead after about 5 s) or `wan` (longer probe timeouts and suspicion: for hosts that stall for seconds, e.g. Soft-RoCE VMs or single-core hosts busy-polling a test). The coordinator asks a worker's API before ending its tests either way.",
	"gossip.bind":      "host:port memberlist listens on, TCP and UDP.",
	"gossip.advertise": "host:port peers dial (a name is resolved once at start, IPv4 first). Empty: the bind address, or the first private IP when bound to `0.0.0.0`; set it behind NAT or with several private interfaces.",
	"gossip.join":      "Seeds to join (host:port), normally the coordinators. A worker keeps retrying until one answers.",
	"gossip.key":       "Base64 AES key (16, 24 or 32 bytes) encrypting gossip; every member needs the same one. Empty: no encryption.",
	"gossip.key_file":  "File holding `gossip.key` (e.g. a mounted Secret). Set this or `gossip.key`, not both.",

	"worker.name":          "Node name in the matrix and in gossip. Empty: the hostname. Use the scheduler's node name (Slurm NodeName, Kubernetes node).",
	"worker.api_listen":    "host:port of the worker API (tasks from the coordinator, QP exchange with peers, /healthz).",
	"worker.api_advertise": "host:port the coordinator and peers dial for the worker API. Empty: the listen address, or the first private IP when it listens on all interfaces.",
	"worker.fabric":        "`verbs` (real HCAs through libibverbs) or `sim` (simulated fabric, no hardware).",
	"worker.gid":           "GID selection: `auto` (IPv4-mapped RoCE v2, index 0 on InfiniBand), `index=N`, `netdev=NAME`, `subnet=CIDR`, `version=v1` or `version=v2`.",
	"worker.devices":       "Only these HCAs (e.g. `mlx5_0,mlx5_1`); rails are numbered in this order. Empty: every HCA found.",
	"worker.labels":        "Free-form labels (rack, switch group) published with the inventory.",

	"sim.preset":     "Simulated node: `roce-2x100` (2 rails RoCE) or `ib-8x400` (8 rails InfiniBand).",
	"sim.seed":       "Seed of the simulated measurements; equal seeds give equal results.",
	"sim.faults":     "Faults to inject, `TARGET:EFFECT` (README: fault specs), e.g. `node-03/mlx5_1:down`.",
	"sim.time_scale": "1: tests take their modelled time; 0: instant; up to 100.",

	"coordinator.name":             "Raft server ID and gossip name. Empty: the hostname. Must stay the same across restarts (raft state under data_dir is keyed by it).",
	"coordinator.api_listen":       "host:port of the API (`/api/v1`), the web UI and `/healthz`.",
	"coordinator.api_advertise":    "host:port other coordinators dial for the API. Empty: the listen address, or the first private IP when it listens on all interfaces.",
	"coordinator.data_dir":         "Directory for the raft log and snapshots. Empty: in memory, sweep history is lost on restart.",
	"coordinator.raft_timeout":     "Raft heartbeat and election timeout. A follower that hears nothing from the leader for this long (up to twice it, randomised) starts an election, so leader failover takes about 2-4 times this. Raise it on congested or WAN links to avoid needless elections.",
	"coordinator.pair_timeout":     "Deadline for one directional pair test; a pair still running then becomes a `timeout` cell.",
	"coordinator.parallelism":      "Pairs tested at once per round. 0: the whole round (every disjoint pair).",
	"coordinator.keep_sweeps":      "Sweeps kept in the raft state; older ones are dropped.",
	"coordinator.profiles_file":    "YAML file of named threshold profiles (see configs/profiles.yaml); a sweep picks one by name.",
	"coordinator.profile":          "Profile used when a sweep names none; empty = the built-in ClusterKit rules.",
	"coordinator.baseline_file":    "A baseline (a good sweep saved with `rdmamesh gate --save-baseline`) every sweep is compared with.",
	"coordinator.raft_bind":        "host:port of the raft TCP transport between coordinators. Empty: a single coordinator, no raft network.",
	"coordinator.raft_advertise":   "host:port other coordinators dial for raft; required when raft_bind listens on all interfaces.",
	"coordinator.peers":            "Static bootstrap set, `name=host:port` per coordinator, this one included.",
	"coordinator.bootstrap_expect": "Bootstrap once this many coordinators are alive in gossip (1, 3 or 5), instead of a static `peers` list. 1: bootstrap alone.",

	"sweep.mode":          "`quick` (connectivity and latency) or `full` (adds bandwidth).",
	"sweep.latency_size":  "Bytes per latency ping-pong message.",
	"sweep.latency_iters": "Measured ping-pong iterations per cell.",
	"sweep.warmup":        "Ping-pong iterations before measuring, not counted.",
	"sweep.bw_size":       "Bytes per RDMA WRITE in the bandwidth stream; 0 skips bandwidth.",
	"sweep.bw_iters":      "Writes in the bandwidth stream.",
	"sweep.tx_depth":      "Bandwidth writes in flight.",
	"sweep.test_timeout":  "Deadline for each measurement inside a pair test.",
	"sweep.pattern":       "Default pairing: `all-pairs` (circle method, n-1 rounds), `k-batch` (at most `batch_size` pairs per round) or `one-to-all` (needs a root per request).",
	"sweep.batch_size":    "Pairs per round for the `k-batch` pattern.",
	"sweep.rail_mode":     "Which HCAs meet: `same` (rail i to rail i), `cross` (rail i to every other rail, the spine paths) or `all`.",
	"sweep.budget":        "Time budget for a whole sweep (0 = none). Past it the sweep fails with the rounds done, and the gate exits 3.",
	"sweep.retests":       "Confirmation passes (ClusterKit style): suspect pairs are retested, then those still suspect, up to this many times (0 to 5).",
	"sweep.connect":       "How test QPs connect: `exchange` (QP info over the worker API) or `rdmacm` (librdmacm, which some RoCE setups need).",

	"demo.nodes":  "Simulated nodes (2 to 4096).",
	"demo.rails":  "Rails (HCAs) per simulated node (1 to 8).",
	"demo.listen": "host:port of the demo's web UI; port 0 picks a free one.",

	"auth.token":      "Shared bearer token, the same in every process: required by the worker API and by coordinator API writes (and reads unless `auth.open_reads`). Empty: no authentication.",
	"auth.token_file": "File holding `auth.token` (e.g. a mounted Secret). Set this or `auth.token`, not both.",
	"auth.open_reads": "Serve coordinator reads (`GET /api/v1`, the UI) without the token; starting a sweep still needs it.",

	"tls.cert_file":   "PEM certificate (with any intermediates) this process serves its APIs and raft with, and presents as a client certificate. Its SANs must cover the addresses peers dial (the advertised API and raft host, often an IP) or set `tls.server_name`. Set: all URLs are `https://`.",
	"tls.key_file":    "PEM private key of `tls.cert_file`.",
	"tls.ca_file":     "PEM CA bundle that verifies peers: the server certificates this process dials and, with `client_auth`, the client certificates it accepts. Empty: the system roots.",
	"tls.client_auth": "Mutual TLS: the coordinator API, the worker API and raft refuse a client without a certificate from `tls.ca_file`. Certificates then need both the serverAuth and clientAuth key usages; browsers and `rdmamesh gate` need a client certificate too.",
	"tls.server_name": "Name every peer's certificate is verified against, instead of the dialled host. Set it when peers are dialled by IP and certificates carry a DNS name only (e.g. one shared name for the cluster).",
}

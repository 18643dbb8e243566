# rdmamesh image: one binary for every role (worker, coordinator, gate).
#
#   docker build -t rdmamesh:dev --build-arg VERSION=$(git describe --tags --always) .
#
# Build with cgo and the verbs engine (libibverbs-dev); run on a slim base
# with rdma-core's runtime libraries: libibverbs and the providers (mlx5,
# rxe, ...) it loads for each HCA. The coordinator role never loads them.
FROM golang:1.26-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libibverbs-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build context has no .git, so the Makefile cannot ask git; pass them.
ARG VERSION=dev
ARG COMMIT=
RUN --mount=type=cache,target=/root/.cache/go-build \
    make build BIN=/out/rdmamesh VERSION="$VERSION" COMMIT="$COMMIT" && /out/rdmamesh version

FROM debian:bookworm-slim
# ibverbs-utils (ibv_devinfo) and iproute2 (`rdma link`, `rdma system`) so an
# operator can compare `kubectl exec ... rdmamesh doctor` with the usual tools.
RUN apt-get update && apt-get install -y --no-install-recommends \
        libibverbs1 ibverbs-providers ibverbs-utils iproute2 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/rdmamesh /usr/local/bin/rdmamesh
# The data directory exists and belongs to the runtime user, so a fresh named
# volume mounted there (compose) inherits that owner and the coordinator can
# write its raft state without root.
RUN mkdir -p /var/lib/rdmamesh && chown 65532:65532 /var/lib/rdmamesh
# The same for the secrets `rdmamesh keygen` writes (compose's shared
# volume), kept private to that user.
RUN mkdir -p /etc/rdmamesh && chown 65532:65532 /etc/rdmamesh && chmod 0700 /etc/rdmamesh
# Non-root by default: the coordinator and gate need nothing more. The worker
# on real HCAs runs as root with only CAP_IPC_LOCK (deploy/kubernetes explains
# why); on the simulated fabric it needs nothing either.
USER 65532:65532
EXPOSE 7946/tcp 7946/udp 7947 8080 8300
ENTRYPOINT ["/usr/local/bin/rdmamesh"]
CMD ["--help"]

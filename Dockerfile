# Build with cgo and the verbs engine; run on a slim base with rdma-core's
# runtime libraries (libibverbs + providers such as mlx5 and rxe).
FROM golang:1.26-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libibverbs-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN make build BIN=/out/rdmamesh

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libibverbs1 ibverbs-providers ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/rdmamesh /usr/local/bin/rdmamesh
ENTRYPOINT ["/usr/local/bin/rdmamesh"]
CMD ["--help"]

# prepl in a container: docs/container.md tells how to run it.
#
#   docker build --build-arg VERSION=$(git describe --always --dirty) -t prepl .
#   docker run -d --name prepl --stop-timeout 60 -p 9104:9104 \
#     -v /etc/prepl:/etc/prepl:ro prepl
#
# Build: a static binary (no cgo: the MySQL driver and everything else are
# pure Go). Run: distroless static, which has CA certificates (for
# ssl-mode=VERIFY_*), time zones (replay --timezone) and a nonroot user,
# and nothing else: no shell, no package manager.

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/prepl ./cmd/prepl

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/prepl /usr/local/bin/prepl
# uid 65532: the mounted config and password files must be readable by it.
USER nonroot:nonroot
# --metrics-addr in the config must listen on 0.0.0.0:9104 (not 127.0.0.1)
# to be reached from outside the container.
EXPOSE 9104
# prepl is PID 1 and handles SIGTERM itself: it finishes or rolls back what
# is in flight and stores the position (give docker stop --stop-timeout 60,
# as the systemd unit's TimeoutStopSec).
ENTRYPOINT ["/usr/local/bin/prepl"]
CMD ["replicate", "--config", "/etc/prepl/prepl.toml", "--log-format", "json", "--progress-bar=false"]

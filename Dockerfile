# One image for the stack's eventlogd pods and its seqgate service (docker-compose.yml):
# both binaries, built from this module.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/eventlogd ./cmd/eventlogd && \
    CGO_ENABLED=0 go build -trimpath -o /out/seqgate ./cmd/seqgate

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/* && \
    useradd --system --uid 10001 seqgate
COPY --from=build /out/eventlogd /out/seqgate /usr/local/bin/
USER seqgate
WORKDIR /home/seqgate
EXPOSE 7070
ENTRYPOINT []
CMD ["eventlogd", "--help"]

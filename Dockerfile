# Boxoffice in a container: the static binary `make build` makes, on a
# base image with nothing else (no shell, no package manager), run as a
# non-root user. `docker compose up --build` runs the production topology
# (compose.yaml); docs/operator.md describes it.

# Build: the same command as the Makefile's build target (boxcli's
# TestContainerFiles checks they agree).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o bin/boxoffice ./cmd/boxoffice

# Run: distroless/static has CA certificates and a nonroot user (65532);
# event timezones are embedded in the binary (time/tzdata).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/boxoffice /usr/local/bin/boxoffice
USER nonroot:nonroot
# The default SQLite database, ./data/boxoffice.db, lands in the user's home;
# set DATABASE_URL=postgres://… for anything beyond a try-out.
WORKDIR /home/nonroot
ENV ADDR=:8080
EXPOSE 8080
# The image has no shell or curl: the binary checks its own /healthz.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/boxoffice", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/boxoffice"]
CMD ["serve"]

# syntax=docker/dockerfile:1
# The fedmetrics image. scripts/image.sh builds it with podman (or docker) and
# runs it against a simulated world; by hand (docs/install.md):
#   docker build --build-arg VERSION=$(build/fedmetrics --version | awk '{print $2}') \
#     --build-arg GIT_COMMIT=$(git rev-parse HEAD) -t REGISTRY/fedmetrics:VERSION .
# Stages on Debian bookworm: `build` compiles the binary with the project's
# own scripts/install-deps.sh and scripts/build.sh; `runtime` is
# bookworm-slim with only the shared libraries the binary links, as a
# non-root user; the last stage copies the built binary onto it. The stage
# `prebuilt` instead copies a binary already built on Debian bookworm from a
# context holding just that file (scripts/image.sh --binary).
# scripts/check-image-libraries.sh (run by the test suite) keeps the runtime
# stage's package list equal to what the binary needs.

FROM debian:bookworm AS build
WORKDIR /src
# The dependencies first, so that a source change does not reinstall them.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh --build-only && rm -rf /var/lib/apt/lists/*
COPY . .
# .git stays out of the context (.dockerignore): the commit that /version and
# fedmetrics_build_info name comes in as an argument,
# docker build --build-arg GIT_COMMIT=$(git rev-parse HEAD) ...
ARG GIT_COMMIT=unknown
RUN bash scripts/build.sh /build -DCMAKE_BUILD_TYPE=Release \
      -DFEDMETRICS_BUILD_TESTS=OFF -DFEDMETRICS_BUILD_BENCH=OFF -DFEDMETRICS_GIT_COMMIT="$GIT_COMMIT" \
 && strip --strip-unneeded /build/fedmetrics

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      # runtime libraries: begin
      libc6 libgcc-s1 libstdc++6 \
      libssl3 zlib1g \
      libboost-url1.81.0 libyaml-cpp0.7 libspdlog1.10 libfmt9 \
      libprometheus-cpp-core1.0 libdate-tz3 \
      libcairo2 \
      # runtime libraries: end
      ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/*
# The kubectl plugin is the same program under its plugin name (main chooses
# the plugin from argv[0]).
RUN ln -s fedmetrics /usr/local/bin/kubectl-fedmetrics
# The version is CMake's project(VERSION) (scripts/release.sh passes it).
ARG VERSION=unknown
LABEL org.opencontainers.image.title="fedmetrics" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.licenses="Apache-2.0"
# nobody:nogroup, as deploy/base/fedmetrics.yaml's runAsUser; nothing is written
# to the image's file system (readOnlyRootFilesystem): the self-signed
# certificate, when there is one, goes to --cert-dir on a writable volume.
USER 65534:65534
EXPOSE 6443
ENTRYPOINT ["/usr/local/bin/fedmetrics"]
CMD ["serve", "--help"]

FROM runtime AS prebuilt
COPY fedmetrics /usr/local/bin/fedmetrics

FROM runtime
COPY --from=build /build/fedmetrics /usr/local/bin/fedmetrics

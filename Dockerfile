# syntax=docker/dockerfile:1
# The fedmetrics image. Build and push (docs/install.md):
#   docker build -t REGISTRY/fedmetrics:v0.1.0 .
#   docker push REGISTRY/fedmetrics:v0.1.0
# Two stages on Debian bookworm: the binary is built with the project's own
# scripts/install-deps.sh and scripts/build.sh, then copied onto bookworm-slim
# with only the shared libraries it links, and runs as a non-root user.
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

FROM debian:bookworm-slim
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
COPY --from=build /build/fedmetrics /usr/local/bin/fedmetrics
# The kubectl plugin is the same program under its plugin name.
RUN ln -s fedmetrics /usr/local/bin/kubectl-fedmetrics
# nobody:nogroup, as deploy/fedmetrics.yaml's runAsUser; nothing is written
# to the image's file system (readOnlyRootFilesystem).
USER 65534:65534
EXPOSE 6443
ENTRYPOINT ["/usr/local/bin/fedmetrics"]
CMD ["serve", "--help"]

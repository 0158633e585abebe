# profgate as a Docker container action (action.yml). Both stages install and build through
# scripts/image.sh, whose steps `make check` also runs on the host (make image-check), so a broken
# step fails CI where Docker cannot run; the package lists are scripts/packages.sh.

# ---- build: Debian bookworm with the -dev packages ----
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/packages.sh scripts/image.sh scripts/
RUN sh scripts/image.sh install-build
COPY . .
RUN sh scripts/image.sh build /out && sh scripts/image.sh verify /out

# ---- run: bookworm-slim with the runtime libraries and ca-certificates ----
FROM debian:bookworm-slim
COPY scripts/packages.sh scripts/image.sh /opt/profgate/scripts/
RUN sh /opt/profgate/scripts/image.sh install-runtime
COPY --from=build /out/usr/local/ /usr/local/
RUN sh /opt/profgate/scripts/image.sh verify /
# No USER: the runner starts the container as root and its file commands (GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY) belong to the runner's user. `profgate action` masks the secrets, then
# runs as the owner of /github/workspace (uid 1001 on hosted runners), so what it writes there
# is the user's. It never opens the workspace's git repository, so safe.directory is not needed.
# No WORKDIR either: the runner mounts the workspace and makes it the working directory.
ENTRYPOINT ["/usr/local/bin/profgate", "action"]

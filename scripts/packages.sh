# scripts/packages.sh: the Debian bookworm packages profgate needs, in one place. Sourced by
# scripts/deps.sh (`make deps`: build and test) and scripts/image.sh (the Dockerfile's two stages,
# and `make check`'s host run of them).
#   PG_BUILD_PACKAGES    to build profgate (the Docker build stage installs these)
#   PG_TEST_PACKAGES     to run its tests and `make bench` (igzip, from isal), on top of the build packages
#   PG_FUZZ_PACKAGES     for `make fuzz` only: clang, the libFuzzer runtime, llvm-symbolizer
#   PG_DIST_PACKAGES     for `make dist` only: patchelf, which points the portable tarball's
#                        binary and bundled libraries at each other (scripts/dist.sh)
#   PG_STRESS_PACKAGES   for `make stress` only: Apache, the real server in front of
#                        `git http-backend` (tests/e2e/lib/apache_git.sh), and GNU time for peak RSS
#   PG_NOISE_PACKAGES    for `make noise` only: PyTorch for the training runs, stress-ng for the
#                        busy mode's co-tenant (tests/noise/run.sh)
#   PG_RUNTIME_PACKAGES  to run it: the libraries it links, and the CA bundle libcurl and
#                        libgit2 (built with mbedTLS and a fixed bundle path) verify TLS with
# A test checks the lists against the Makefile's pkg-config modules and the binary's libraries.
PG_BUILD_PACKAGES="gcc make pkg-config libgit2-dev libcurl4-openssl-dev libssl-dev libcjson-dev zlib1g-dev libprotobuf-c-dev protobuf-c-compiler libisal-dev"
PG_TEST_PACKAGES="libcmocka-dev git gzip python3 python3-yaml clang-format openssl bash zsh man-db groff-base chromium isal strace"
PG_RUNTIME_PACKAGES="libgit2-1.5 libcurl4 libssl3 libcjson1 zlib1g libprotobuf-c1 libisal2 ca-certificates"
PG_FUZZ_PACKAGES="clang libclang-rt-dev llvm"
PG_DIST_PACKAGES="patchelf"
PG_STRESS_PACKAGES="apache2 time"
PG_NOISE_PACKAGES="python3-torch stress-ng"

#!/usr/bin/env bash
# Builds twin's FRR container images from Debian's archives (no container registry needed):
# one image per Debian suite, each holding that suite's FRR release, tagged with the FRR
# version the image's own zebra reports (localhost/twin-frr:<version>) and labelled with it.
# Cached: an image already present is kept unless --rebuild. Idempotent.
#
#   tools/build-images.sh [--rebuild] [--json] [SUITE...]     (default: bullseye bookworm trixie)
#
# Suites and the FRR each holds (DESIGN.md §4b, measured): bullseye 7.5.1, bookworm 8.4.4,
# trixie 10.3. sid moves and its Release file is expired on these machines: it builds only when
# named, with the archive's validity check off.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mirror=${TWIN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
rebuild=0
json=0
suites=()
for a in "$@"; do
  case "$a" in
    --rebuild) rebuild=1 ;;
    --json) json=1 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-images: unknown option '$a'" >&2; exit 2 ;;
    *) suites+=("$a") ;;
  esac
done
[ ${#suites[@]} -gt 0 ] || suites=(bullseye bookworm trixie)
[ "$(id -u)" = 0 ] || { echo "build-images: run as root (rootful podman)" >&2; exit 3; }
for tool in podman mmdebstrap; do
  command -v "$tool" >/dev/null || {
    echo "build-images: $tool is missing; run tools/install-deps.sh --containers" >&2; exit 3; }
done
# twin's own podman settings, never the host's /etc/containers (tools/podman-conf.sh).
export CONTAINERS_CONF
CONTAINERS_CONF=$("$here/podman-conf.sh")

work=$(mktemp -d /var/tmp/twin-images.XXXXXX)
trap 'rm -rf "$work"' EXIT
results=()

build_one() {
  local suite=$1
  local existing
  existing=$(podman images --filter "label=org.twin.suite=$suite" --format '{{.Repository}}:{{.Tag}}' | head -1)
  if [ -n "$existing" ] && [ "$rebuild" = 0 ]; then
    echo "build-images: $suite: $existing is present (cached; --rebuild to build again)" >&2
    results+=("{\"suite\":\"$suite\",\"image\":\"$existing\",\"cached\":true}")
    return 0
  fi
  local t0=$SECONDS extra=()
  [ "$suite" = sid ] && extra+=(--aptopt='Acquire::Check-Valid-Until "false"')
  echo "build-images: $suite: mmdebstrap from $mirror (frr, frr-pythontools, iproute2, procps) ..." >&2
  # minbase + FRR and what its scripts call; recommends off keeps the image small. The policy
  # file keeps FRR's service from being started inside the chroot.
  mmdebstrap --variant=minbase --mode=root --format=tar "${extra[@]}" \
    --include=frr,frr-pythontools,iproute2,procps,iputils-ping \
    --aptopt='APT::Install-Recommends "false"' \
    --essential-hook='printf "#!/bin/sh\nexit 101\n" > "$1/usr/sbin/policy-rc.d"; chmod +x "$1/usr/sbin/policy-rc.d"' \
    --customize-hook='rm -f "$1/usr/sbin/policy-rc.d"; mkdir -p "$1/var/tmp/frr"; rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$suite" "$work/$suite.tar" "$mirror" >"$work/$suite.log" 2>&1 || {
      echo "build-images: $suite: mmdebstrap failed; its last lines:" >&2
      tail -5 "$work/$suite.log" >&2
      return 1; }
  local id version
  id=$(podman import --quiet --change 'CMD ["sleep", "infinity"]' \
        --change "LABEL org.twin.suite=$suite" "$work/$suite.tar" "localhost/twin-frr-build:$suite")
  # The version is the image's own zebra's answer, never the suite's name.
  version=$(podman run --rm --network none "$id" /usr/lib/frr/zebra --version |
            sed -n 's/^zebra version \([0-9][0-9.]*\).*/\1/p' | head -1)
  [ -n "$version" ] || { echo "build-images: $suite: the image's zebra reports no version" >&2; return 1; }
  # Re-import with the version label (podman import cannot add a label to an image afterwards).
  podman rmi "localhost/twin-frr-build:$suite" >/dev/null
  [ -n "$existing" ] && podman rmi -f "$existing" >/dev/null 2>&1 || true
  podman import --quiet --change 'CMD ["sleep", "infinity"]' \
    --change "LABEL org.twin.suite=$suite" --change "LABEL org.twin.frr-version=$version" \
    "$work/$suite.tar" "localhost/twin-frr:$version" >/dev/null
  rm -f "$work/$suite.tar"
  local size
  size=$(podman image inspect "localhost/twin-frr:$version" --format '{{.Size}}')
  echo "build-images: $suite: localhost/twin-frr:$version (FRR $version), $((size / 1000000)) MB, $((SECONDS - t0)) s" >&2
  results+=("{\"suite\":\"$suite\",\"image\":\"localhost/twin-frr:$version\",\"frr_version\":\"$version\",\"bytes\":$size,\"seconds\":$((SECONDS - t0)),\"cached\":false}")
}

rc=0
for s in "${suites[@]}"; do build_one "$s" || rc=1; done
if [ "$json" = 1 ]; then
  (IFS=,; echo "[${results[*]}]")
fi
exit $rc

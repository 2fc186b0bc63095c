#!/usr/bin/env bash
# Writes twin's own podman settings (never the host's /etc/containers) and prints the file's
# path, for CONTAINERS_CONF. twin writes the same file itself (twin/drivers/podman.cpp); this
# copy serves the shell tools. Settings measured on Debian 12's podman 4.3 without systemd
# (DESIGN.md §4b): runc (crun refuses the hybrid cgroup layout), cgroupfs, file events, and
# ulimits root may set here.
set -euo pipefail
dir=/var/lib/twin/podman
conf=$dir/containers.conf
mkdir -p "$dir"
want='# twin'"'"'s podman settings (written by twin; edits are overwritten)
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"'
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
  printf '%s\n' "$want" > "$conf.tmp" && mv "$conf.tmp" "$conf"
fi
echo "$conf"

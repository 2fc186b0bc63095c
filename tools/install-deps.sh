#!/usr/bin/env bash
# Installs what twin needs to build, run and test, from Debian 12 packages only. Idempotent.
# The host's own frr service is never started: the package's service is masked before install
# and policy-rc.d keeps maintainer scripts from starting it.
set -euo pipefail
vm=0
browser=0
containers=0
for a in "$@"; do
  case "$a" in
    --vm) vm=1 ;;
    --browser) browser=1 ;;
    --containers) containers=1 ;;
    -h|--help) echo "usage: tools/install-deps.sh [--vm] [--browser] [--containers]"
               echo "  --vm          libvirt and QEMU for VM nodes"
               echo "  --browser     headless Chromium and Selenium for the web page's test"
               echo "  --containers  podman (rootful, runc) and mmdebstrap for container nodes"
               echo "                and tools/build-images.sh"
               exit 0 ;;
    *) echo "install-deps: unknown option '$a'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "install-deps: run as root (apt-get install)" >&2; exit 3; }

pkgs=(build-essential cmake ninja-build ccache pkg-config
      frr frr-pythontools libboost1.81-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libssl-dev
      libgtest-dev libgmock-dev libvirt-dev iproute2 iputils-ping nftables procps util-linux
      graphviz libjs-d3 node-xterm esbuild jq
      openssh-server openssh-client ansible python3-paramiko iperf3 libiperf-dev)
# twin graph -f svg (graphviz); twin serve's page: d3 3.5 (libjs-d3) and the terminal, Debian's
# node-xterm bundled at build time by esbuild (its libjs-xterm does not load in a browser);
# jq for the curl examples of the API (docs/serve.md).
# A lab's management network (docs/management.md): one sshd per node from openssh-server (its
# own host service is masked below: twin needs the program, not a listener on the host), the
# ssh client, and Debian's ansible with the frr.frr collection, which needs paramiko for
# network_cli (ansible-pylibssh is not in Debian 12). iperf3 for the traffic family.
if [ "$browser" = 1 ]; then
  pkgs+=(chromium chromium-driver python3-selenium)
fi
# Container nodes: Debian 12's podman with runc (crun refuses this kernel's hybrid cgroups,
# DESIGN.md §4b) and conmon; mmdebstrap builds twin's FRR images from Debian's archives. twin
# passes its own settings (CONTAINERS_CONF), never the host's /etc/containers.
if [ "$containers" = 1 ]; then
  pkgs+=(podman runc conmon mmdebstrap uidmap)
fi
# dnsmasq-base: DHCP for VMs on a lab's management network (static leases, docs/management.md).
if [ "$vm" = 1 ]; then
  pkgs+=(libvirt-daemon libvirt-daemon-driver-qemu qemu-system-x86 qemu-utils busybox-static cpio
        dnsmasq-base)
fi

# What Debian's libvirt-daemon-system would set up, without its systemd units, polkit and
# default NAT network: qemu:///system runs QEMU as libvirt-qemu, which udev lets open /dev/kvm
# through group kvm.
vm_accounts() {
  getent group kvm >/dev/null || groupadd --system kvm
  getent group libvirt-qemu >/dev/null || groupadd --system libvirt-qemu
  if ! getent passwd libvirt-qemu >/dev/null; then
    useradd --system --gid libvirt-qemu --groups kvm --home-dir /var/lib/libvirt \
      --no-create-home --shell /usr/sbin/nologin libvirt-qemu
    echo "install-deps: created user libvirt-qemu (QEMU of qemu:///system runs as it)"
  fi
  # twin's VM images live here, readable by that user.
  install -d -m 0755 /var/lib/twin /var/lib/twin/images
}

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  [ "$vm" = 1 ] && vm_accounts
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi

# Keep package maintainer scripts from starting services (frr, libvirtd) on this host.
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  created_policy=1
fi
trap '[ "$created_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl mask frr.service >/dev/null 2>&1 || true
  # The host's own sshd is not twin's business: masked only when this script installs it.
  if printf '%s\n' "${missing[@]}" | grep -qx openssh-server; then
    systemctl mask ssh.service ssh.socket >/dev/null 2>&1 || true
  fi
fi

# libboost1.81-dev conflicts with the 1.74 -dev packages; remove those first if present.
old=$(dpkg-query -W -f='${Package} ${Status}\n' 'libboost*1.74*-dev' 2>/dev/null |
      awk '/install ok installed/{print $1}' || true)
if [ -n "$old" ]; then
  echo "install-deps: removing conflicting Boost 1.74 -dev packages: $old"
  DEBIAN_FRONTEND=noninteractive apt-get remove -y $old
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
[ "$vm" = 1 ] && vm_accounts
echo "install-deps: done"

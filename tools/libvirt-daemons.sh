#!/usr/bin/env bash
# Starts or stops libvirtd and virtlogd without systemd (containers, CI machines, this project's
# test machines), for qemu:///system. On a host where systemd runs libvirt, use systemctl
# instead; this script then does nothing.
#
#   tools/libvirt-daemons.sh start    idempotent; waits until libvirtd answers
#   tools/libvirt-daemons.sh stop     stops only the daemons this script started (their PIDs
#                                     are kept in /run/twin-libvirt)
#   tools/libvirt-daemons.sh status
#
# qemu:///system runs QEMU as libvirt-qemu (tools/install-deps.sh --vm creates the user). Its
# capability cache stays valid only when that user may open /dev/kvm, which udev normally
# arranges (group kvm, mode 0660); without udev this script does the same, else libvirt probes
# QEMU again on every domain start (~60 s here).
set -euo pipefail
piddir=/run/twin-libvirt
sock=/run/libvirt/libvirt-sock
[ "$(id -u)" = 0 ] || { echo "libvirt-daemons: run as root" >&2; exit 3; }

alive() { [ -f "$piddir/$1.pid" ] && kill -0 "$(cat "$piddir/$1.pid")" 2>/dev/null; }
answers() { [ -S "$sock" ] && virt_ok; }
virt_ok() {
  # A connection attempt through libvirt's own socket; no virsh needed.
  python3 - "$sock" <<'PY' 2>/dev/null
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(1); s.connect(sys.argv[1])
PY
}

case "${1:-}" in
start)
  for b in libvirtd virtlogd; do
    command -v "$b" >/dev/null || { echo "libvirt-daemons: $b not found (tools/install-deps.sh --vm)" >&2; exit 3; }
  done
  getent passwd libvirt-qemu >/dev/null || { echo "libvirt-daemons: user libvirt-qemu missing (tools/install-deps.sh --vm)" >&2; exit 3; }
  if [ -c /dev/kvm ] && getent group kvm >/dev/null; then
    chgrp kvm /dev/kvm && chmod 0660 /dev/kvm
  fi
  if answers; then echo "libvirt-daemons: libvirtd already answers on $sock"; exit 0; fi
  mkdir -p "$piddir" /var/log/libvirt /var/lib/libvirt /var/cache/libvirt /run/libvirt
  if ! alive virtlogd; then
    virtlogd >>/var/log/libvirt/virtlogd.out 2>&1 &
    echo $! > "$piddir/virtlogd.pid"
  fi
  if ! alive libvirtd; then
    libvirtd >>/var/log/libvirt/libvirtd.out 2>&1 &
    echo $! > "$piddir/libvirtd.pid"
  fi
  for _ in $(seq 1 100); do
    answers && { echo "libvirt-daemons: libvirtd $(cat "$piddir/libvirtd.pid") and virtlogd $(cat "$piddir/virtlogd.pid") running"; exit 0; }
    alive libvirtd || { echo "libvirt-daemons: libvirtd exited; see /var/log/libvirt/libvirtd.out" >&2; tail -5 /var/log/libvirt/libvirtd.out >&2; exit 4; }
    sleep 0.1
  done
  echo "libvirt-daemons: libvirtd did not answer within 10 s" >&2
  exit 4
  ;;
stop)
  for d in libvirtd virtlogd; do
    if alive "$d"; then
      pid=$(cat "$piddir/$d.pid")
      kill "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
      echo "libvirt-daemons: stopped $d ($pid)"
    fi
    rm -f "$piddir/$d.pid"
  done
  ;;
status)
  for d in libvirtd virtlogd; do
    if alive "$d"; then echo "$d: running ($(cat "$piddir/$d.pid"))"; else echo "$d: not started by this script"; fi
  done
  answers && echo "libvirt: answers on $sock" || echo "libvirt: no answer on $sock"
  ;;
*) echo "usage: tools/libvirt-daemons.sh start|stop|status" >&2; exit 2 ;;
esac

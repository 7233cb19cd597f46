# shellcheck shell=bash disable=SC2034  # (variables here are used by the sourcing scripts)
# Shared helpers of the Soft-RoCE environment (sourced by prepare, run-in-guest,
# device-run, selfcheck). Depends on nothing outside this folder and Debian packages.

RXE_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)

# Bump when the layout of the cache or of the initramfs changes in a way that
# guest-init's text does not show.
RXE_RECIPE=3

# Host tools needed to build and boot the guest.
RXE_HOST_PKGS=(qemu-system-x86 busybox-static kmod xz-utils util-linux)
# User space that runs inside the guest (the host's root is the guest's root).
RXE_USER_PKGS=(iproute2 libibverbs1 ibverbs-providers librdmacm1 ibverbs-utils
  rdmacm-utils rdma-core python3-pyverbs)

# Kernel modules the guest loads, named as for modprobe, as GROUP:MODULE. Their
# dependencies come from the kernel's own modules.dep. The groups io and rdma load in
# parallel (no module may be needed by both); net loads after io, only in a guest with a
# NIC (two-guests), so it may need io's modules. crc32_generic must precede rdma_rxe:
# rxe asks the crypto layer for "crc32" and nothing autoloads it in the guest.
RXE_MODULES=(io:virtio_pci io:virtio_console io:9pnet_virtio io:9p io:overlay io:dummy
  rdma:crc32_generic rdma:ib_uverbs rdma:rdma_rxe rdma:rdma_ucm net:virtio_net)

rxe_msg() { printf 'rxe: %s\n' "$*" >&2; }
rxe_die() { printf 'rxe: %s\n' "$*" >&2; exit "${RXE_DIE_STATUS:-1}"; }

rxe_now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
# rxe_elapsed START -> seconds since START with one decimal.
rxe_elapsed() {
  local now=${EPOCHREALTIME/,/.} start=$1
  local a=$(( ${now%.*} * 1000000 + 10#${now#*.} ))
  local b=$(( ${start%.*} * 1000000 + 10#${start#*.} ))
  local d=$(( (a - b + 50000) / 100000 ))
  printf '%d.%d' $((d / 10)) $((d % 10))
}

rxe_cache_root() {
  printf '%s/rxe' "${NDKCT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ndkct}"
}

# Identity of what prepare puts into the initramfs; a change means rebuild it.
rxe_recipe_hash() {
  { printf 'recipe %s strip %s\n' "$RXE_RECIPE" "${NDKCT_RXE_STRIP:-1}"
    printf '%s\n' "${RXE_MODULES[@]}"
    cat "$RXE_DIR/guest-init"; } | sha256sum | cut -c1-16
}

# The cache keeps one initramfs per recipe (initramfs-HASH.cpio) and one module set per
# module list (modules-HASH/), so checkouts with different recipes share the cache
# without rebuilding each other's files.
rxe_modules_hash() { printf '%s\n' "${RXE_MODULES[@]}" | sha256sum | cut -c1-16; }
rxe_initramfs() { printf '%s/initramfs-%s.cpio' "$1" "$(rxe_recipe_hash)"; }

# rxe_cached_kver -> kernel version of the last good prepare, if still complete.
rxe_cached_kver() {
  local root kver dir
  root=$(rxe_cache_root)
  [[ -r $root/current ]] || return 1
  kver=$(<"$root/current")
  dir=$root/$kver
  [[ -n $kver && -s $dir/vmlinux && -s $(rxe_initramfs "$dir") ]] || return 1
  printf '%s' "$kver"
}

rxe_qboot() {
  local f
  for f in /usr/share/qemu/qboot.rom /usr/share/seabios/qboot.rom; do
    [[ -r $f ]] && { printf '%s' "$f"; return 0; }
  done
  return 1
}

# rxe_missing_pkgs PKG... -> prints the packages that are not installed.
rxe_missing_pkgs() {
  local -A have=()
  local p s
  while read -r p s; do
    [[ $s == installed ]] && have[${p%%:*}]=1
  done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null || true)
  for p; do [[ -n ${have[$p]:-} ]] || printf '%s\n' "$p"; done
}

# rxe_need_pkgs PKG... : installs the missing ones from Debian's archive, quietly.
rxe_need_pkgs() {
  local missing log sudo=()
  command -v dpkg-query >/dev/null || rxe_die "not a Debian system (no dpkg-query); install $* by hand"
  mapfile -t missing < <(rxe_missing_pkgs "$@")
  ((${#missing[@]})) || return 0
  if ((EUID != 0)); then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n)
    else rxe_die "missing Debian packages: ${missing[*]} (install them: sudo apt-get install ${missing[*]})"
    fi
  fi
  rxe_msg "installing Debian packages: ${missing[*]}"
  log=$(mktemp)
  local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -qq
    -o DPkg::Lock::Timeout=600 --no-install-recommends)
  if ! "${apt[@]}" install "${missing[@]}" >"$log" 2>&1; then
    "${sudo[@]}" apt-get -qq -o DPkg::Lock::Timeout=600 update >>"$log" 2>&1 || true
    if ! "${apt[@]}" install "${missing[@]}" >>"$log" 2>&1; then
      tail -n 5 "$log" >&2; rm -f "$log"
      rxe_die "could not install Debian packages: ${missing[*]}"
    fi
  fi
  rm -f "$log"
}

# rxe_has_device: a usable RDMA device on this machine (an RDMA device in sysfs and
# a uverbs character device for user space).
rxe_has_device() {
  local d n
  for d in /sys/class/infiniband/*; do
    [[ -e $d ]] || continue
    for n in /sys/class/infiniband_verbs/uverbs*; do
      [[ -c /dev/infiniband/${n##*/} ]] && return 0
    done
  done
  return 1
}

# rxe_device_facts -> "DEVICE GID_INDEX ADDRESS" for tests on this machine's device:
# NDKCT_RDMA_DEV / NDKCT_RDMA_GID_INDEX / NDKCT_RDMA_ADDR when set, else the first
# device, on RoCE its first IPv4-mapped RoCE v2 GID (the address, for rdma_cm, is that
# IPv4 unless it is a loopback one), on InfiniBand GID 0 (address '-' when none is known).
rxe_device_facts() {
  local dev=${NDKCT_RDMA_DEV:-} idx=${NDKCT_RDMA_GID_INDEX:-} addr=${NDKCT_RDMA_ADDR:-}
  local port g f i type gid
  if [[ -z $dev ]]; then
    for f in /sys/class/infiniband/*; do [[ -e $f ]] && { dev=${f##*/}; break; }; done
  fi
  [[ -n $dev ]] || return 1
  port=/sys/class/infiniband/$dev/ports/1
  if [[ -z $idx || -z $addr ]]; then
    if [[ $(cat "$port/link_layer" 2>/dev/null) == Ethernet ]]; then
      for g in "$port"/gids/*; do
        i=${g##*/}
        gid=$(cat "$g" 2>/dev/null) || continue
        type=$(cat "$port/gid_attrs/types/$i" 2>/dev/null) || continue
        if [[ $gid == 0000:0000:0000:0000:0000:ffff:* && $type == "RoCE v2" ]]; then
          [[ -n $idx ]] || idx=$i
          if [[ -z $addr && $i == "$idx" ]]; then
            addr=$((16#${gid:30:2})).$((16#${gid:32:2})).$((16#${gid:35:2})).$((16#${gid:37:2}))
            # rdma_cm never resolves a loopback address to an RDMA device.
            [[ $addr == 127.* ]] && addr=-
          fi
          break
        fi
      done
    fi
    [[ -n $idx ]] || idx=0
  fi
  printf '%s %s %s\n' "$dev" "$idx" "${addr:--}"
}

#!/usr/bin/env bash
# Build the integration-test binaries (kube-apiserver, kubectl, etcd) from Go modules and fetch the
# Cluster API CRDs from the Cluster API module, into a cache outside the repository.
#
# Idempotent: a binary that already reports the pinned version is reused, so a warm run takes
# seconds. Prints the directory it filled; tests find it via KUBEBUILDER_ASSETS or the same default.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.env"

dest=${KUBEBUILDER_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-machinepool/testbin}
mkdir -p "$dest"

export CGO_ENABLED=0 GOFLAGS="-modcacherw -trimpath -buildvcs=false"
# Built binaries must not depend on the builder's Go toolchain line in go.mod.
export GOTOOLCHAIN=local

log() { printf 'testbin: %s\n' "$*" >&2; }

version_ldflags() {
  local flags="" pkg minor=${KUBERNETES_VERSION#v1.}
  minor=${minor%%.*}
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  printf '%s' "$flags"
}

build_k8s() {
  local name=$1 version_cmd=--version
  [ "$name" = kubectl ] && version_cmd="version --client"
  # shellcheck disable=SC2086 # version_cmd is two words for kubectl
  if [ -x "$dest/$name" ] && "$dest/$name" $version_cmd 2>/dev/null | grep -q "$KUBERNETES_VERSION"; then
    log "$name $KUBERNETES_VERSION present"
    return
  fi
  log "building $name $KUBERNETES_VERSION (cold: many minutes)"
  (cd "$here/k8s" && go build -ldflags "-s -w $(version_ldflags)" -o "$dest/$name.tmp" "k8s.io/kubernetes/cmd/$name")
  mv "$dest/$name.tmp" "$dest/$name"
}

build_etcd() {
  if [ -x "$dest/etcd" ] && "$dest/etcd" --version 2>/dev/null | grep -q "etcd Version: ${ETCD_VERSION#v}"; then
    log "etcd $ETCD_VERSION present"
    return
  fi
  log "building etcd $ETCD_VERSION"
  (cd "$here/etcd" && go build -ldflags "-s -w" -o "$dest/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$dest/etcd.tmp" "$dest/etcd"
}

# CAPI's go.mod cannot be required as a dependency (local replaces), so download the module zip
# and copy the CRD bases out of it. The layout moved from config/ to core/config/ in v1.14.
fetch_capi_crds() {
  local version=$1 out="$dest/crds/capi-$1" dir base
  if [ -f "$out/.complete" ]; then
    log "CAPI $version CRDs present"
    return
  fi
  log "fetching CAPI $version CRDs"
  dir=$(cd "$here/etcd" && go mod download -json "sigs.k8s.io/cluster-api@$version" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  base="$dir/core/config/crd/bases"
  [ -d "$base" ] || base="$dir/config/crd/bases"
  rm -rf "$out" && mkdir -p "$out"
  for kind in clusters machines machinepools machinedeployments machinesets machinehealthchecks; do
    cp "$base/cluster.x-k8s.io_$kind.yaml" "$out/"
  done
  chmod -R u+w "$out"
  touch "$out/.complete"
}

build_etcd
build_k8s kube-apiserver
build_k8s kubectl
fetch_capi_crds "$CAPI_VERSION"
fetch_capi_crds "$CAPI_V1BETA1_VERSION"
printf '%s\n' "$dest"

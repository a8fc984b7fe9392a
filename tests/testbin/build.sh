#!/usr/bin/env bash
# Build the integration-test binaries (kube-apiserver, kube-controller-manager, kubectl, etcd, the
# Cluster API core manager) from Go modules and fetch the Cluster API CRDs and webhook manifest from
# the Cluster API module, into a cache outside the repository.
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
  # Not `cmd | grep -q`: under pipefail grep's early exit can SIGPIPE the binary and fail the test.
  if [ -x "$dest/$name" ] && [[ "$("$dest/$name" $version_cmd 2>/dev/null)" == *"$KUBERNETES_VERSION"* ]]; then
    log "$name $KUBERNETES_VERSION present"
    return
  fi
  log "building $name $KUBERNETES_VERSION (cold: many minutes)"
  (cd "$here/k8s" && go build -ldflags "-s -w $(version_ldflags)" -o "$dest/$name.tmp" "k8s.io/kubernetes/cmd/$name")
  mv "$dest/$name.tmp" "$dest/$name"
}

build_etcd() {
  if [ -x "$dest/etcd" ] && [[ "$("$dest/etcd" --version 2>/dev/null)" == *"etcd Version: ${ETCD_VERSION#v}"* ]]; then
    log "etcd $ETCD_VERSION present"
    return
  fi
  log "building etcd $ETCD_VERSION"
  (cd "$here/etcd" && go build -ldflags "-s -w" -o "$dest/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$dest/etcd.tmp" "$dest/etcd"
}

# The manager has no --version flag, so the version is part of the file name. Upstream's go.mod
# replaces the api module with a directory a dependent cannot see; capi/go.mod points it back at
# the release.
build_capi_manager() {
  local version=$1 module_dir=$2 package=$3 out="$dest/cluster-api-manager-$1"
  if [ -x "$out" ]; then
    log "Cluster API manager $version present"
    return
  fi
  log "building Cluster API manager $version (cold: many minutes)"
  (cd "$module_dir" && go build -o "$out.tmp" \
     -ldflags "-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$version" "$package")
  mv "$out.tmp" "$out"
}

# clusterctl of the CRDs' release, for the scale benchmark only (tests/benchmarks/scale.py): it is
# in the same module as the manager, so the wrapper module and its warm module cache serve it too.
# Like the manager it has no version flag the build can check cheaply, so the version is in the name.
build_clusterctl() {
  local out="$dest/clusterctl-$CAPI_VERSION"
  if [ -x "$out" ]; then
    log "clusterctl $CAPI_VERSION present"
    return
  fi
  log "building clusterctl $CAPI_VERSION (cold: minutes)"
  (cd "$here/capi" && go build -o "$out.tmp" \
     -ldflags "-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$CAPI_VERSION" \
     sigs.k8s.io/cluster-api/cmd/clusterctl)
  mv "$out.tmp" "$out"
}

# krew and its manifest validator, for the single-file install tests (tests/integration/test_krew.py):
# neither reports its version cheaply (krew makes its directories under KREW_ROOT first), so, like
# the manager, the version is in the names.
build_krew() {
  local cmd out
  for cmd in krew validate-krew-manifest; do
    out="$dest/$cmd-$KREW_VERSION"
    if [ -x "$out" ]; then
      log "$cmd $KREW_VERSION present"
      continue
    fi
    log "building $cmd $KREW_VERSION (cold: a minute or two)"
    (cd "$here/krew" && go build -o "$out.tmp" \
       -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION" "sigs.k8s.io/krew/cmd/$cmd")
    mv "$out.tmp" "$out"
  done
}

# Where a module version is once downloaded (its zip unpacked in the module cache; nothing built).
module_dir() {
  (cd "$here/etcd" && go mod download -json "$1") \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'
}

# CAPI's go.mod cannot be required as a dependency (local replaces), so download the module zip
# and copy the CRD bases out of it. The layout moved from config/ to core/config/ in v1.14.
fetch_capi_crds() {
  local version=$1 out="$dest/crds/capi-$1" dir base
  if [ -f "$out/webhook/manifests.yaml" ]; then
    log "CAPI $version CRDs present"
    return
  fi
  log "fetching CAPI $version CRDs"
  dir=$(module_dir "sigs.k8s.io/cluster-api@$version")
  base="$dir/core/config/crd/bases"
  [ -d "$base" ] || base="$dir/config/crd/bases"
  rm -rf "$out" && mkdir -p "$out"
  # Every core CRD: the manager's caches wait for all of them. The webhook manifest lets the live
  # tests register the real defaulting and validation.
  cp "$base"/*_*.yaml "$out/"
  mkdir "$out/webhook"
  cp "$base/../../webhook/manifests.yaml" "$out/webhook/"
  chmod -R u+w "$out"
}

# The GitOps owners' CRDs, copied out of the controllers' Go modules (downloaded, never built):
# Argo CD's Application (its module is large, a 58 MB zip, but its published CRD file is only on
# GitHub, which the Go toolchain does not fetch from) and Flux's Kustomization (0.8 MB). Flux's
# helm-controller module is not served by the Go module proxy: no HelmRelease CRD here.
fetch_gitops_crds() {
  local out="$dest/crds/gitops-$ARGOCD_VERSION-$KUSTOMIZE_CONTROLLER_VERSION" argo flux
  if [ -f "$out/kustomizations.yaml" ]; then
    log "GitOps CRDs present"
    return
  fi
  log "fetching Argo CD $ARGOCD_VERSION and kustomize-controller $KUSTOMIZE_CONTROLLER_VERSION CRDs"
  argo=$(module_dir "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION")
  flux=$(module_dir "github.com/fluxcd/kustomize-controller@$KUSTOMIZE_CONTROLLER_VERSION")
  rm -rf "$out.tmp" && mkdir -p "$out.tmp"
  cp "$argo/manifests/crds/application-crd.yaml" "$out.tmp/applications.yaml"
  cp "$flux/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml" \
     "$out.tmp/kustomizations.yaml"
  chmod -R u+w "$out.tmp"
  rm -rf "$out" && mv "$out.tmp" "$out"
}

# Opt-in targets: CI runs the script without arguments and must not pay for them.
if [ "${1:-}" = clusterctl ]; then
  build_clusterctl
  printf '%s\n' "$dest"
  exit 0
elif [ $# -gt 0 ]; then
  log "unknown target: $1 (known: clusterctl; no argument builds the test binaries)"
  exit 2
fi

build_etcd
build_k8s kube-apiserver
build_k8s kubectl
build_k8s kube-controller-manager
build_capi_manager "$CAPI_VERSION" "$here/capi" sigs.k8s.io/cluster-api/core
# v1.10 (v1beta1) is built against Kubernetes 0.32 libraries: it shares no build cache with the
# rest (cold 2m50s on 2 cores after everything above, which takes 11m47s).
build_capi_manager "$CAPI_V1BETA1_VERSION" "$here/capi-v1beta1" sigs.k8s.io/cluster-api
build_krew
fetch_capi_crds "$CAPI_VERSION"
fetch_capi_crds "$CAPI_V1BETA1_VERSION"
fetch_gitops_crds
printf '%s\n' "$dest"

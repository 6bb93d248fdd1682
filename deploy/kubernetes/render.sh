#!/usr/bin/env bash
# Renders every overlay into deploy/kubernetes/rendered/<overlay>.yaml (committed, for
# `kubectl apply -f` users). CI (KubernetesManifestsIT) fails when a rendering is stale.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
for overlay in overlays/*/; do
  name=$(basename "$overlay")
  kubectl kustomize "$overlay" > "rendered/$name.yaml"
  echo "rendered/$name.yaml"
done

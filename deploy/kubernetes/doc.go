// Package kubernetes holds seqgate's Kubernetes manifests for a sharded run (the *.yaml files
// beside this one; docs/scale-out.md). It has no code: its test decodes every manifest strictly into
// the k8s.io/api types, since no cluster and no schema download is at hand in CI, and checks that the
// pieces fit (the agents Job's shard count, the scenario, the volume, the verify Job's permissions).
package kubernetes

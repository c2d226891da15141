// Package kubernetes holds the per-node DaemonSet manifests of sqlfwd and
// their schema test. It is a module of its own so that the Kubernetes API
// types the test decodes into (k8s.io/api, k8s.io/apimachinery) are never
// in the main module's requirements: e2e's TestKubernetesManifests runs this
// module's tests.
package kubernetes

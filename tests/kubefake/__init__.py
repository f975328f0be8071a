"""kubefake: a fake Kubernetes cluster for the tests of the Kubernetes backend (not
shipped). A loopback API server (`api`, `store`, `validation`, `patch`, `errors`) serving the v1 pods
API as the official client calls it; a node whose pods run as real containers in the
local Docker Engine (`runtime`; `podspec` translates a pod spec into a container); the
attach WebSocket relayed to them (`attach`); the `kube_cluster` fixture (`fixtures`)."""

"""The Kubernetes backend (optional extra `sandboxrun[kubernetes]`): one hardened Pod per
hook invocation. `pod` builds the pod (a pure function), `client` loads the cluster's
configuration and translates its errors, `lifecycle` watches, claims and sweeps pods,
`attach` carries one hook's streams over the v5 attach websocket, and `backend` ties
them together. Nothing here imports docker code, and the `kubernetes` client is
imported only by these modules, when this backend is chosen.
"""

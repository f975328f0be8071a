"""The Kubernetes backend (optional extra `sandboxrun[kubernetes]`): one hardened Pod per
hook invocation. So far `pod` (the pod spec, a pure function); the backend that creates,
attaches to and deletes the pods comes next. Nothing here imports docker code, and only
the backend itself will import the `kubernetes` client.
"""

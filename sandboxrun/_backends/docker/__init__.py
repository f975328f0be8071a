"""The Docker Engine backend: one hardened container per hook run.

`backend` is the lifecycle (create, run, remove; labels and deadline; the preflight);
`spec` the container's hardening alone; `stream` the stream of one run; `warm` how a
run uses the warm pool; `engine` is the one place engine errors are translated and
retried; `reaper` sweeps by the labels of `_backends/labels.py`; `network` and
`allowlist` are the opt-in networks; `images` builds the hook images. The lifecycle
both backends share (`_backends/lifecycle.py`), the image's init helper
(`_backends/helper.py`) and the warm pool (`_backends/pool.py`) are shared with the
Kubernetes backend.
"""

"""The Docker Engine backend: one hardened container per hook run.

`backend` builds and runs the container; `engine` is the one place engine errors are
translated and retried; `reaper` sweeps by the labels of `_backends/labels.py`;
`network` and `allowlist` are the opt-in networks; `images` builds the hook images.
The image's init helper (`_backends/helper.py`) and the warm pool (`_backends/pool.py`)
are shared with the Kubernetes backend.
"""

"""The Docker Engine backend: one hardened container per hook run.

`backend` builds and runs the container; `engine` is the one place engine errors are
translated and retried; `helper` speaks to the image's init helper; `pool` keeps the warm
path's containers started ahead of time; `reaper` sweeps by the labels of
`_backends/labels.py`; `network` and `allowlist` are the opt-in networks; `images` builds
the hook images.
"""

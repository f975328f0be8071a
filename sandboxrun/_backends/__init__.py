"""The backend seam: where a hook's command runs, in isolation (DESIGN.md §2, §4).

`base` holds the protocol every backend speaks and the fake that tests the layers above
the sandbox; `docker/` is the product. A backend never reads events or settings files:
it is handed one `ExecRequest` and answers one `ExecResult`.
"""

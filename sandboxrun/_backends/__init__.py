"""The backend seam: where a hook's command runs, in isolation (DESIGN.md §2, §4).

`base` holds the protocol every backend speaks and the fake that tests the layers above
the sandbox; `choose` builds the backend the settings name (`backend = "docker"` or
`"kubernetes"`), importing only that one; `docker/` and `kubernetes/` are the two
products, which never import each other: what both need lives here (`lifecycle`,
`labels`, `helper`, `pool`, `environment`, `image_tools`). A backend never reads events
or settings files: it is handed one `ExecRequest` and answers one `ExecResult`.
"""

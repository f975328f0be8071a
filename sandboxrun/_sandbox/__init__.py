"""What a hook's sandbox is made of, around the runner: its mounts (`mounts`), the checks
before a run (`preflight`) and the hints after one (`hints`), the plugin state and the
session's tmp folder it keeps (`state`, `sessiontmp`), and the env file it may append to
(`envfile`). Empty on purpose: the cold client imports only the modules it needs."""

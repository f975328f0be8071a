"""`sandboxrun install` / `uninstall`: make an agent run its existing hooks through the
sandbox, without the user rewriting them, and undo it byte for byte.

- Claude family (`claude.py`): every command hook of the chosen settings files runs
  through `sandboxrun exec`; `--managed` writes Claude Code's managed settings instead.
- Gemini CLI (`gemini.py`): its settings files, the same way, Gemini's text rules.
- Copilot (`copilot.py`): its hook files rewritten the same way, with its `Shape`.
- Cline family (`cline.py`): shims in the folders the agent scans, the originals moved
  aside; `--global` adds forwarding hooks in the user's global folders.

Each agent's module has the same two entries, `install` and `notes` (`registry.py`: the
module is the third column of the agents' one table, `_dialects.table.WHERE`);
`command.py` (`install`, `uninstall`) and `status.py` (`notes`: what `list` and `doctor`
must tell the user, e.g. a hook that runs unsandboxed although the workspace was
installed, a pull brought it) ask the registry and branch on no agent. What install
leaves in an agent's files is recognised through `sandboxrun/_wrapped.py`, which the
dialects read too.
"""

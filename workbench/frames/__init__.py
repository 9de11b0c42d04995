"""DataFrames of session logs. Layer: frames (imports io, core, pandas, numpy, pyarrow; never
widgets or plots).

Entry points are `workbench.load(path)` (a `workbench.session.Session` with one ``*_df()``
method per frame) and `workbench.load_sessions(root_or_paths)` (many sessions, one set of
frames keyed by ``session``). Every frame's columns, dtypes and meanings are listed in
`workbench.frames.schema.SCHEMAS` (``Session.columns(name)`` shows one as a table):

=============== ===============================================================================
events          one row per event: seq, time, type, turn/step, message, surface status, price
surface         the surface at a seq: one row per node, tokens per meter, lineage size
timeline        one row per seq: surface size and tokens, replace generation, provider usage
replacements    one row per applied replacement (checkpoint, pruned copy, other)
shadow          one row per hidden node: hidden at/by, lineage root, depth
compactions     one row per compaction attempt: bracket, status, trigger, audit checks
prunes          one row per tool-result prune, with its audit checks
tool_calls      one row per tool call: call and result paired, duration, error flag
requests        one row per model call: envelope, surface it saw, finish, usage
turns           one row per turn: span, end reason, counts, usage
defects         one row per loader defect
=============== ===============================================================================

Modules: `columns` (Column groups, dtypes, conversion), `scan` (the one pass over events) with
`facts` and `preview` (what it reads of each payload), `meters`, one module per frame family
(`events`, `surface`, `timeline`, `compactions`, `calls`, `turns`), `schema` (the registry),
`many` (load_sessions) with `pool` (the per-session parallel map: local processes or
dask.distributed), `parquet` (frames with dtypes that round-trip), `store` (the incremental
Parquet store of a session root) and `fleet` (SQL over a store with DuckDB).
"""

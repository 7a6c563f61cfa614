-- corobench result store, schema 6: profiles and idle trials.
-- A run with `[run] profile = true` (or `run --profile`) takes one extra,
-- unmeasured trial per scenario under `perf record` and keeps its on-CPU
-- stacks here, folded (one `comm;outer;…;inner COUNT` line per distinct
-- stack), or why no profile could be taken. These trials are not rows of
-- `trials`, so no figure of theirs enters the analysis.
CREATE TABLE profiles (
    run_id              TEXT NOT NULL,
    scenario_idx        INTEGER NOT NULL,
    started_at_unix_ms  INTEGER NOT NULL,
    frequency_hz        INTEGER NOT NULL CHECK (frequency_hz > 0),
    -- `captured` with `samples` and `folded_stacks`, or `skipped` with `reason`.
    status              TEXT NOT NULL CHECK (status IN ('captured', 'skipped')),
    samples             INTEGER CHECK (samples >= 0),
    folded_stacks       TEXT,
    reason              TEXT,
    PRIMARY KEY (run_id, scenario_idx),
    FOREIGN KEY (run_id, scenario_idx)
        REFERENCES scenarios (run_id, idx) ON DELETE CASCADE,
    CHECK ((status = 'captured') = (folded_stacks IS NOT NULL AND samples IS NOT NULL)),
    CHECK ((status = 'skipped') = (reason IS NOT NULL))
) STRICT;

-- An idle trial (a workload with `idle_connections`) sends no load: it
-- opens that many keep-alive connections, each answered once, and records
-- the server tree's RSS once it settled. Bytes per connection are the
-- slope of `rss_bytes` against `connections` over a sweep's trials.
ALTER TABLE scenarios ADD COLUMN idle INTEGER NOT NULL DEFAULT 0 CHECK (idle IN (0, 1));
CREATE TABLE idle_trials (
    run_id        TEXT NOT NULL,
    scenario_idx  INTEGER NOT NULL,
    trial_idx     INTEGER NOT NULL,
    connections   INTEGER NOT NULL CHECK (connections > 0),
    rss_bytes     INTEGER NOT NULL CHECK (rss_bytes >= 0),
    settled       INTEGER NOT NULL CHECK (settled IN (0, 1)),
    waited_s      REAL NOT NULL CHECK (waited_s >= 0),
    PRIMARY KEY (run_id, scenario_idx, trial_idx),
    FOREIGN KEY (run_id, scenario_idx, trial_idx)
        REFERENCES trials (run_id, scenario_idx, trial_idx) ON DELETE CASCADE
) STRICT;

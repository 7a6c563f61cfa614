-- corobench result store, schema 2.
-- A run may end `failed`: every trial it ran failed, so it measured nothing.
-- A run being measured records the corobench process measuring it (its pid
-- and the time it started, in clock ticks after boot, so that a pid reused
-- by another process is not mistaken for it): a second `run --resume` of a
-- live run is refused, and a run whose process died shows as such.
-- A scenario may run a program target instead of loading a server
-- (`scenarios.program_json`: the server it talks to), and a trial of it
-- stores what the program reported: the whole result as JSON and every
-- figure as a row of `program_metrics`, to query with plain SQL.
-- A scenario records how its connections carried requests: `keepalive` 0
-- opens a connection per request, `pipeline` is the number of requests in
-- flight per connection; scenarios stored before are keep-alive, one at a time.
-- A trial of a connection per request keeps its connect-time histogram as a
-- BLOB beside the latency ones.
-- A run keeps the published claims its spec puts to the test, resolved to
-- its scenarios (`runs.claims_json`, NULL for none), and the target its
-- tables compare with (`runs.baseline`, NULL for the first one), so that a
-- report on another machine needs neither the spec's targets nor flags.
-- SQLite cannot change a CHECK constraint in place, so `runs` is rebuilt
-- (foreign keys are off while this runs; see schema.rs).

CREATE TABLE runs_v2 (
    id                   TEXT PRIMARY KEY,
    started_at_unix_ms   INTEGER NOT NULL,
    finished_at_unix_ms  INTEGER,
    status               TEXT NOT NULL
                         CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    suite                TEXT NOT NULL,
    spec_toml            TEXT NOT NULL,
    -- Decimal text: seeds are unsigned 64-bit, SQLite integers are signed.
    seed                 TEXT NOT NULL,
    trials_per_scenario  INTEGER NOT NULL CHECK (trials_per_scenario >= 0),
    provenance_json      TEXT NOT NULL,
    process_pid          INTEGER CHECK (process_pid > 0),
    process_started      INTEGER CHECK (process_started >= 0),
    claims_json          TEXT,
    baseline             TEXT
) STRICT;

INSERT INTO runs_v2 (id, started_at_unix_ms, finished_at_unix_ms, status, suite, spec_toml,
                     seed, trials_per_scenario, provenance_json)
SELECT id, started_at_unix_ms, finished_at_unix_ms, status, suite, spec_toml,
       seed, trials_per_scenario, provenance_json
FROM runs;

DROP TABLE runs;
ALTER TABLE runs_v2 RENAME TO runs;
CREATE INDEX runs_by_start ON runs (started_at_unix_ms);

ALTER TABLE scenarios ADD COLUMN program_json TEXT;
ALTER TABLE scenarios ADD COLUMN keepalive INTEGER NOT NULL DEFAULT 1 CHECK (keepalive IN (0, 1));
ALTER TABLE scenarios ADD COLUMN pipeline INTEGER NOT NULL DEFAULT 1 CHECK (pipeline >= 1);
ALTER TABLE trials ADD COLUMN program_json TEXT;
ALTER TABLE trials ADD COLUMN connect_latency_hdr BLOB;

CREATE TABLE program_metrics (
    run_id        TEXT NOT NULL,
    scenario_idx  INTEGER NOT NULL,
    trial_idx     INTEGER NOT NULL,
    -- The order the program printed its figures in.
    position      INTEGER NOT NULL CHECK (position >= 0),
    unit          TEXT NOT NULL,
    value         REAL NOT NULL,
    PRIMARY KEY (run_id, scenario_idx, trial_idx, unit),
    FOREIGN KEY (run_id, scenario_idx, trial_idx)
        REFERENCES trials (run_id, scenario_idx, trial_idx) ON DELETE CASCADE
) STRICT;

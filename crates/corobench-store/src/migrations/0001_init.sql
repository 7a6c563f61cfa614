-- corobench result store, schema 1.
-- Times are Unix milliseconds (UTC). Latencies are microseconds. Every
-- headline figure of a trial is a real column, so a person can query the
-- store with `sqlite3` alone; the full documents are kept as JSON and the
-- latency histograms as HdrHistogram V2 BLOBs for exact merging.

CREATE TABLE runs (
    id                   TEXT PRIMARY KEY,
    started_at_unix_ms   INTEGER NOT NULL,
    finished_at_unix_ms  INTEGER,
    status               TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted')),
    suite                TEXT NOT NULL,
    spec_toml            TEXT NOT NULL,
    -- Decimal text: seeds are unsigned 64-bit, SQLite integers are signed.
    seed                 TEXT NOT NULL,
    trials_per_scenario  INTEGER NOT NULL CHECK (trials_per_scenario >= 0),
    provenance_json      TEXT NOT NULL
) STRICT;

CREATE INDEX runs_by_start ON runs (started_at_unix_ms);

CREATE TABLE scenarios (
    run_id           TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx              INTEGER NOT NULL CHECK (idx >= 0),
    key              TEXT NOT NULL,
    target           TEXT NOT NULL,
    parameters_json  TEXT NOT NULL,
    workload         TEXT NOT NULL,
    method           TEXT NOT NULL,
    path             TEXT NOT NULL,
    body_bytes       INTEGER NOT NULL,
    schedule         TEXT NOT NULL CHECK (schedule IN ('closed', 'open')),
    -- Open loop only: the offered rate.
    rate_per_s       REAL CHECK ((schedule = 'open') = (rate_per_s IS NOT NULL)),
    connections      INTEGER NOT NULL,
    warmup_s         REAL NOT NULL,
    duration_s       REAL NOT NULL,
    PRIMARY KEY (run_id, idx),
    UNIQUE (run_id, key)
) STRICT;

CREATE TABLE trials (
    run_id                        TEXT NOT NULL,
    scenario_idx                  INTEGER NOT NULL,
    trial_idx                     INTEGER NOT NULL CHECK (trial_idx >= 0),
    -- Position in the run's interleaved order.
    sequence                      INTEGER NOT NULL,
    status                        TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    failure                       TEXT,
    started_at_unix_ms            INTEGER NOT NULL,

    -- Load (NULL when the trial failed before load ran).
    requests                      INTEGER,
    requests_per_s                REAL,
    latency_mean_us               REAL,
    latency_p50_us                INTEGER,
    latency_p90_us                INTEGER,
    latency_p99_us                INTEGER,
    latency_p999_us               INTEGER,
    latency_max_us                INTEGER,
    errors_total                  INTEGER,
    error_rate                    REAL,
    generator_cpu_us_per_request  REAL,
    generator_utilization         REAL,
    generator_bound               INTEGER CHECK (generator_bound IN (0, 1)),

    -- The target's process tree (NULL when it was not sampled).
    server_samples                INTEGER,
    server_cpu_pct_mean           REAL,
    server_cpu_user_pct_mean      REAL,
    server_cpu_system_pct_mean    REAL,
    server_rss_mean_bytes         INTEGER,
    server_rss_peak_bytes         INTEGER,
    server_threads_peak           INTEGER,
    server_processes_peak         INTEGER,
    server_ctx_voluntary          INTEGER,
    server_ctx_involuntary        INTEGER,

    -- /stats task counts around the measured window.
    tasks_before                  INTEGER,
    tasks_peak                    INTEGER,
    tasks_after                   INTEGER,

    -- The full load report without its histograms and timeline, which have
    -- their own columns.
    load_json                     TEXT,
    latency_hdr                   BLOB,
    latency_uncorrected_hdr       BLOB,
    timeline_json                 TEXT,
    resource_series_json          TEXT NOT NULL,
    flags_json                    TEXT NOT NULL,

    PRIMARY KEY (run_id, scenario_idx, trial_idx),
    FOREIGN KEY (run_id, scenario_idx) REFERENCES scenarios (run_id, idx) ON DELETE CASCADE
) STRICT;

-- One row per trial with its scenario's name: the table to start from by hand.
CREATE VIEW trial_results AS
SELECT
    t.run_id,
    s.key AS scenario,
    s.target,
    t.trial_idx,
    t.status,
    t.requests_per_s,
    t.latency_p50_us,
    t.latency_p99_us,
    t.error_rate,
    t.server_cpu_pct_mean,
    t.server_rss_peak_bytes,
    t.generator_bound,
    t.failure
FROM trials AS t
JOIN scenarios AS s ON s.run_id = t.run_id AND s.idx = t.scenario_idx;

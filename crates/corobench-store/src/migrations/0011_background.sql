-- corobench result store, schema 11.
-- A scenario's background request: HTTP/2 streams on every connection
-- that carry a GET of `background_path` beside the measured requests
-- (`background_streams` of them), to measure head-of-line blocking. NULL
-- for scenarios without one and for every scenario stored before schema 11.
-- A trial's background outcomes are in its load report (`load_json`, key
-- `http2.background`).
ALTER TABLE scenarios ADD COLUMN background_path TEXT;
ALTER TABLE scenarios ADD COLUMN background_streams INTEGER
    CHECK (background_streams IS NULL OR background_streams >= 1);

-- corobench result store, schema 9.
-- What a scenario's connections spoke: `tls` (HTTP/1.1 over TLS), `h2`
-- (HTTP/2 over TLS) or `h2c` (cleartext HTTP/2). NULL is cleartext
-- HTTP/1.1, the protocol of every scenario stored before schema 9.
-- `streams`: HTTP/2 streams per connection (NULL: 1). `tls_resume`: 0 when
-- every TLS connection paid a full handshake (NULL: sessions resumed).
-- A trial's TLS figures are in its load report (`load_json`, key `tls`).
ALTER TABLE scenarios ADD COLUMN protocol TEXT
    CHECK (protocol IS NULL OR protocol IN ('tls', 'h2', 'h2c'));
ALTER TABLE scenarios ADD COLUMN streams INTEGER CHECK (streams IS NULL OR streams >= 1);
ALTER TABLE scenarios ADD COLUMN tls_resume INTEGER CHECK (tls_resume IS NULL OR tls_resume IN (0, 1));

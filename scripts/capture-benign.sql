-- capture-benign.sql: the small database scripts/capture-benign.sh captures
-- psql and pg_dump against, and e2e/benigntools_test.go runs them on through
-- sqlfwd: one of each kind of object they describe or dump.
CREATE SCHEMA app;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE SEQUENCE order_seq;
CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL, m mood DEFAULT 'ok', n posint, created timestamptz DEFAULT now());
CREATE INDEX t_name_idx ON t (name);
CREATE TABLE app.orders (id int PRIMARY KEY DEFAULT nextval('order_seq'), t_id int REFERENCES t (id), total numeric(10, 2));
CREATE VIEW v_t AS SELECT id, name FROM t WHERE m <> 'sad';
CREATE MATERIALIZED VIEW mv_t AS SELECT m, count(*) FROM t GROUP BY m;
CREATE FUNCTION add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.created := now();
  RETURN NEW;
END
$$;
CREATE TRIGGER t_touch BEFORE INSERT OR UPDATE ON t FOR EACH ROW EXECUTE FUNCTION touch();
COMMENT ON TABLE t IS 'the capture table';
COMMENT ON COLUMN t.name IS 'a name';
INSERT INTO t (id, name, m, n) VALUES (1, 'a', 'ok', 1), (2, 'b', 'happy', 2), (3, 'c''s', 'sad', 3);
INSERT INTO app.orders (t_id, total) VALUES (1, 9.99), (2, 100);
REFRESH MATERIALIZED VIEW mv_t;

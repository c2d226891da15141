-- ORM-style application traffic
SELECT "users"."id", "users"."email", "users"."created_at" FROM "users" WHERE "users"."id" = $1 LIMIT $2
SELECT u.id, u.name, count(o.id) AS orders FROM users u LEFT JOIN orders o ON o.user_id = u.id WHERE u.active GROUP BY u.id, u.name ORDER BY orders DESC LIMIT 20
INSERT INTO "orders" ("user_id", "total", "created_at") VALUES ($1, $2, now()) RETURNING "id"
INSERT INTO events (kind, payload) VALUES ('login', '{"ip": "10.0.0.1"}'::jsonb) ON CONFLICT (id) DO UPDATE SET payload = EXCLUDED.payload
UPDATE "users" SET "last_login" = $1 WHERE "users"."id" = $2
UPDATE accounts SET balance = balance - 10 WHERE id IN (SELECT account_id FROM holds WHERE expires < now())
DELETE FROM sessions WHERE expires_at < now() - interval '1 day'
DELETE FROM cart_items WHERE cart_id = $1 AND product_id = $2
SELECT pg_advisory_lock(42)
SELECT set_config('app.tenant', '7', false)
SELECT current_user, current_database(), version()
SELECT lo_creat(-1)
SELECT n.nspname, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND pg_catalog.pg_table_is_visible(c.oid)
WITH recent AS (SELECT * FROM orders WHERE created_at > now() - interval '7 days') SELECT user_id, sum(total) FROM recent GROUP BY user_id
SELECT * FROM items WHERE name ILIKE '%' || $1 || '%' ORDER BY id LIMIT 50 OFFSET 100
BEGIN ISOLATION LEVEL REPEATABLE READ
SAVEPOINT s1
ROLLBACK TO SAVEPOINT s1
COMMIT
SET application_name = 'web'
SET LOCAL statement_timeout = '5s'
SHOW server_version
DISCARD ALL
LISTEN jobs
NOTIFY jobs, 'ready'
PREPARE get_user (int) AS SELECT * FROM users WHERE id = $1
EXECUTE get_user(1)
DEALLOCATE get_user
COPY orders TO STDOUT WITH (FORMAT csv, HEADER)
COPY (SELECT id, total FROM orders WHERE total > 100) TO STDOUT
COPY staging_rows (a, b) FROM STDIN
-- migrations
CREATE TABLE IF NOT EXISTS schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL)
CREATE TABLE users (id bigserial PRIMARY KEY, email text NOT NULL UNIQUE, created_at timestamptz NOT NULL DEFAULT now())
ALTER TABLE users ADD COLUMN last_login timestamptz
CREATE INDEX CONCURRENTLY IF NOT EXISTS users_email_lower ON users (lower(email))
ALTER TABLE orders ADD CONSTRAINT orders_user_fk FOREIGN KEY (user_id) REFERENCES users (id)
CREATE VIEW active_users AS SELECT * FROM users WHERE active
DROP INDEX IF EXISTS users_email_lower
CREATE EXTENSION IF NOT EXISTS pgcrypto
CREATE OR REPLACE FUNCTION touch_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$
CREATE TRIGGER users_touch BEFORE UPDATE ON users FOR EACH ROW EXECUTE FUNCTION touch_updated_at()
DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_type WHERE typname = 'mood') THEN CREATE TYPE mood AS ENUM ('sad', 'ok'); END IF; END $$
INSERT INTO schema_migrations (version, dirty) VALUES (20260101, false)
GRANT SELECT ON users TO reporting
-- multi-statement simple query
BEGIN; UPDATE t SET a = 1 WHERE id = 2; COMMIT;
-- allowed examples from docs/policy.md
SELECT pg_size_pretty(pg_database_size(current_database()))
COPY users TO STDOUT WITH (FORMAT csv)
DELETE FROM orders WHERE id = 7
TRUNCATE orders
DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_class WHERE relname = 'programs') THEN CREATE TABLE programs (id int, copy_count int); END IF; END $$

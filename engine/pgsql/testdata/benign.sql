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
-- sysbench oltp_read_write / oltp_point_select (pgsql driver)
SELECT c FROM sbtest1 WHERE id=5013
SELECT c FROM sbtest3 WHERE id BETWEEN 5013 AND 5112
SELECT SUM(k) FROM sbtest2 WHERE id BETWEEN 4990 AND 5089
SELECT c FROM sbtest1 WHERE id BETWEEN 5013 AND 5112 ORDER BY c
SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5013 AND 5112 ORDER BY c
UPDATE sbtest1 SET k=k+1 WHERE id=4987
UPDATE sbtest1 SET c='73891873-90182-1-98721' WHERE id=5021
DELETE FROM sbtest1 WHERE id=5019
INSERT INTO sbtest1 (id, k, c, pad) VALUES (5019, 4993, '0987-123', '33-22')
CREATE TABLE sbtest1(id SERIAL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))
CREATE INDEX k_1 ON sbtest1(k)
DROP TABLE IF EXISTS sbtest1
-- ORM traffic: ActiveRecord, Django, Hibernate, SQLAlchemy, Prisma, GORM, sqlc
SELECT "users".* FROM "users" WHERE "users"."email" = $1 LIMIT $2
SELECT 1 AS one FROM "users" WHERE "users"."email" = $1 LIMIT $2
SELECT "auth_user"."id", "auth_user"."password", "auth_user"."last_login" FROM "auth_user" WHERE "auth_user"."username" = 'alice' LIMIT 21
SELECT COUNT(*) AS "__count" FROM "blog_post" WHERE ("blog_post"."published" AND "blog_post"."author_id" = 3)
SELECT "blog_post"."id" FROM "blog_post" WHERE ("blog_post"."author_id" = 3 OR "blog_post"."editor_id" = 3) ORDER BY "blog_post"."created" DESC
SELECT * FROM products WHERE 1=1 AND category_id = $1 AND price < $2
SELECT * FROM products WHERE TRUE
SELECT * FROM products WHERE (name = $1 OR $1 IS NULL) AND (category_id = $2 OR $2 IS NULL)
select user0_.id as id1_0_, user0_.email as email2_0_ from users user0_ where user0_.id=$1
select o1_0.id, o1_0.total, c1_0.id, c1_0.name from orders o1_0 left join customers c1_0 on c1_0.id=o1_0.customer_id where o1_0.id in ($1, $2, $3)
SELECT users.id, users.name FROM users WHERE users.id IN (__[POSTCOMPILE_id_1])
SELECT "public"."User"."id", "public"."User"."email" FROM "public"."User" WHERE ("public"."User"."email" = $1 AND 1=1) LIMIT $2 OFFSET $3
SELECT * FROM "users" WHERE "users"."deleted_at" IS NULL AND "users"."id" = 1 ORDER BY "users"."id" LIMIT 1
-- name: GetAuthor :one
SELECT id, name, bio FROM authors WHERE id = $1 LIMIT 1 /*application='web',controller='authors',action='show'*/
SELECT a.id FROM accounts a WHERE a.id = $1 -- trailing note
UPDATE "users" SET "updated_at" = $1 WHERE "users"."id" IN (SELECT "users"."id" FROM "users" WHERE "users"."org_id" = $2 ORDER BY "users"."id" LIMIT $3)
INSERT INTO "users" ("name", "email") VALUES ($1, $2), ($3, $4), ($5, $6) RETURNING "id"
SELECT t.oid, t.typname FROM pg_type t WHERE t.typname IN ('hstore', 'citext')
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ANY(current_schemas(false)) UNION ALL SELECT viewname FROM pg_views WHERE schemaname = 'public'
SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'users' ORDER BY ordinal_position
SELECT id FROM a UNION SELECT id FROM b
SELECT pg_sleep(0.1)
SELECT pg_try_advisory_lock(72707369)
SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED
RESET ALL
-- migrations (golang-migrate, Rails, Django, Flyway, Alembic), run one file per Query
CREATE TABLE accounts (id bigserial PRIMARY KEY, owner text NOT NULL); CREATE INDEX accounts_owner ON accounts (owner); INSERT INTO schema_migrations (version) VALUES (2);
BEGIN; ALTER TABLE users ADD COLUMN age int; UPDATE users SET age = 0 WHERE age IS NULL; COMMIT;
SELECT pg_advisory_lock(1); CREATE TABLE t2 (a int); SELECT pg_advisory_unlock(1);
CREATE SCHEMA IF NOT EXISTS audit
CREATE ROLE reporting NOLOGIN
GRANT USAGE ON SCHEMA audit TO reporting
ALTER DEFAULT PRIVILEGES IN SCHEMA audit GRANT SELECT ON TABLES TO reporting
REVOKE ALL ON users FROM PUBLIC
CREATE MATERIALIZED VIEW order_totals AS SELECT user_id, sum(total) FROM orders GROUP BY user_id
REFRESH MATERIALIZED VIEW CONCURRENTLY order_totals
CREATE TYPE status AS ENUM ('new', 'done')
ALTER TYPE status ADD VALUE 'failed'
COMMENT ON TABLE users IS 'people'
CREATE OR REPLACE FUNCTION cleanup_sessions() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DELETE FROM sessions WHERE expires_at < now(); END $$
CREATE FUNCTION add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'select a + b'
DO $$ BEGIN UPDATE users SET email = lower(email) WHERE email <> lower(email); END $$
WITH RECURSIVE tree AS (SELECT id, parent_id FROM nodes WHERE id = 1 UNION ALL SELECT n.id, n.parent_id FROM nodes n JOIN tree t ON n.parent_id = t.id) SELECT * FROM tree
EXPLAIN ANALYZE SELECT * FROM orders WHERE id = 1
EXPLAIN SELECT * FROM orders
VACUUM (VERBOSE, ANALYZE) orders
ANALYZE orders
CHECKPOINT
LOCK TABLE orders IN SHARE MODE
INSERT INTO kv (k, v) VALUES ('a--b', '/* not a comment */'), (E'it\'s', $tag$ -- $tag$)
SELECT * FROM t WHERE s = 'O''Reilly' AND note = 'x/**/y'

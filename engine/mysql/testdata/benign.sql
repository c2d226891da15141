# Benign statements: each line must be allowed by the default policy.
# sysbench oltp_read_only / oltp_read_write / oltp_point_select (src/lua/oltp_common.lua)
SELECT c FROM sbtest1 WHERE id=4990
SELECT c FROM sbtest1 WHERE id BETWEEN 5016 AND 5115
SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 4978 AND 5077
SELECT c FROM sbtest1 WHERE id BETWEEN 4998 AND 5097 ORDER BY c
SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5012 AND 5111 ORDER BY c
UPDATE sbtest1 SET k=k+1 WHERE id=5020
UPDATE sbtest1 SET c='46386012468-79429227131-24213627470-78785102385' WHERE id=4995
DELETE FROM sbtest1 WHERE id=5002
INSERT INTO sbtest1 (id, k, c, pad) VALUES (5002, 4988, '72081237566-41524963738-42155437596-48432412520', '50994618719-46919101744-09399493813-74612017766')
BEGIN
COMMIT
CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = innodb */
CREATE INDEX k_1 ON sbtest1(k)
DROP TABLE IF EXISTS sbtest1
ANALYZE TABLE sbtest1
# connectors' session setup
SET NAMES utf8mb4
SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci
SET autocommit=0
SET autocommit=1
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED
SET character_set_results = NULL
SET sql_mode='STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'
SET @@session.time_zone = '+00:00'
SELECT @@max_allowed_packet
SELECT @@session.transaction_isolation
SELECT @@version_comment LIMIT 1
SELECT DATABASE(), USER() LIMIT 1
SELECT VERSION()
SHOW VARIABLES LIKE 'lower_case_table_names'
SHOW WARNINGS
SHOW FULL TABLES
SHOW FULL COLUMNS FROM `users`
SHOW INDEX FROM `users`
SHOW CREATE TABLE `users`
SHOW TABLE STATUS LIKE 'users'
SHOW GRANTS
SHOW SESSION STATUS LIKE 'Ssl_cipher'
START TRANSACTION
START TRANSACTION READ ONLY
ROLLBACK
SAVEPOINT active_record_1
RELEASE SAVEPOINT active_record_1
ROLLBACK TO SAVEPOINT active_record_1
KILL QUERY 1234
USE app
# Hibernate
select user0_.id as id1_0_, user0_.email as email2_0_, user0_.name as name3_0_ from users user0_ where user0_.email=?
select user0_.id as id1_0_0_, orders1_.id as id1_1_1_, orders1_.total as total2_1_1_ from users user0_ left outer join orders orders1_ on user0_.id=orders1_.user_id where user0_.id=? for update
insert into users (email, name, id) values (?, ?, ?)
update users set email=?, name=?, version=? where id=? and version=?
delete from users where id=? and version=?
select next_val as id_val from hibernate_sequence for update
update hibernate_sequence set next_val= ? where next_val=?
select count(*) as col_0_0_ from users user0_ where user0_.name like ? escape '!'
# ActiveRecord
SELECT `users`.* FROM `users` WHERE `users`.`id` = 1 LIMIT 1
SELECT `users`.* FROM `users` WHERE `users`.`email` = 'a@example.com' ORDER BY `users`.`id` ASC LIMIT 1
SELECT 1 AS one FROM `users` WHERE `users`.`email` = BINARY 'a@example.com' LIMIT 1
INSERT INTO `users` (`email`, `created_at`, `updated_at`) VALUES ('a@example.com', '2026-12-01 10:00:00.123456', '2026-12-01 10:00:00.123456')
UPDATE `users` SET `users`.`name` = 'Bob', `users`.`updated_at` = '2026-12-01 10:00:00' WHERE `users`.`id` = 7
DELETE FROM `sessions` WHERE `sessions`.`updated_at` < '2026-11-01 00:00:00'
SELECT COUNT(*) FROM `orders` WHERE `orders`.`user_id` = 7 AND `orders`.`state` IN ('paid', 'shipped')
SELECT `schema_migrations`.`version` FROM `schema_migrations` ORDER BY `schema_migrations`.`version` ASC
INSERT INTO `schema_migrations` (`version`) VALUES ('20261201100000')
SELECT `ar_internal_metadata`.* FROM `ar_internal_metadata` WHERE `ar_internal_metadata`.`key` = 'environment' LIMIT 1
SELECT GET_LOCK('1488727196', 0)
SELECT RELEASE_LOCK('1488727196')
# Django
SELECT `auth_user`.`id`, `auth_user`.`password`, `auth_user`.`last_login`, `auth_user`.`username` FROM `auth_user` WHERE `auth_user`.`username` = 'alice' LIMIT 21
SELECT `django_session`.`session_key`, `django_session`.`session_data`, `django_session`.`expire_date` FROM `django_session` WHERE (`django_session`.`expire_date` > '2026-12-01 10:00:00.000000' AND `django_session`.`session_key` = 'abc') LIMIT 21
UPDATE `auth_user` SET `last_login` = '2026-12-01 10:00:00.000000' WHERE `auth_user`.`id` = 1
SELECT (1) AS `a` FROM `django_content_type` WHERE (`django_content_type`.`app_label` = 'auth' AND `django_content_type`.`model` = 'user') LIMIT 1
SELECT `django_migrations`.`id`, `django_migrations`.`app`, `django_migrations`.`name`, `django_migrations`.`applied` FROM `django_migrations`
SELECT engine FROM information_schema.tables WHERE table_name = 'django_migrations'
SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = DATABASE()
SELECT kc.`constraint_name`, kc.`column_name`, kc.`referenced_table_name`, kc.`referenced_column_name`, c.`constraint_type` FROM information_schema.key_column_usage AS kc JOIN information_schema.table_constraints AS c ON kc.table_schema = c.table_schema AND kc.table_name = c.table_name AND kc.constraint_name = c.constraint_name WHERE kc.table_schema = DATABASE() AND kc.table_name = 'auth_user'
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED
# SQLAlchemy
SELECT users.id AS users_id, users.name AS users_name FROM users WHERE users.id = 7
SELECT users.id, users.name FROM users WHERE users.name IN ('a', 'b', 'c')
SELECT count(*) AS count_1 FROM (SELECT users.id AS users_id FROM users WHERE users.name = 'x') AS anon_1
INSERT INTO users (name, fullname) VALUES ('spongebob', 'Spongebob Squarepants'), ('sandy', 'Sandy Cheeks')
SHOW VARIABLES LIKE 'sql_mode'
SELECT CAST('test plain returns' AS CHAR(60)) AS anon_1
SELECT CAST('test collated returns' AS CHAR CHARACTER SET utf8mb4) COLLATE utf8mb4_bin AS anon_1
# GORM
SELECT * FROM `users` WHERE `users`.`deleted_at` IS NULL AND `users`.`id` = 10 ORDER BY `users`.`id` LIMIT 1
INSERT INTO `users` (`created_at`,`updated_at`,`deleted_at`,`name`,`age`) VALUES ('2026-12-01 10:00:00.000','2026-12-01 10:00:00.000',NULL,'jinzhu',18) ON DUPLICATE KEY UPDATE `id`=`id`
UPDATE `users` SET `deleted_at`='2026-12-01 10:00:00.000' WHERE `users`.`id` = 10 AND `users`.`deleted_at` IS NULL
SELECT count(*) FROM information_schema.tables WHERE table_schema = 'app' AND table_name = 'users' AND table_type = 'BASE TABLE'
SELECT DATABASE()
SELECT SCHEMA_NAME from Information_schema.SCHEMATA where SCHEMA_NAME LIKE 'app%' ORDER BY SCHEMA_NAME='app' DESC,SCHEMA_NAME limit 1
SELECT column_name, column_default, is_nullable = 'YES', data_type, character_maximum_length, column_type, column_key, extra, column_comment, numeric_precision, numeric_scale , datetime_precision FROM information_schema.columns WHERE table_schema = 'app' AND table_name = 'users' ORDER BY ORDINAL_POSITION
# migrations (Flyway, Liquibase, Rails, Django, golang-migrate)
CREATE TABLE `users` (`id` bigint NOT NULL AUTO_INCREMENT PRIMARY KEY, `email` varchar(255) NOT NULL, `created_at` datetime(6) NOT NULL, UNIQUE KEY `index_users_on_email` (`email`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci
ALTER TABLE `users` ADD `name` varchar(255)
ALTER TABLE `users` ADD INDEX `index_users_on_name` (`name`), ALGORITHM=INPLACE, LOCK=NONE
ALTER TABLE `orders` ADD CONSTRAINT `fk_rails_1` FOREIGN KEY (`user_id`) REFERENCES `users` (`id`) ON DELETE CASCADE
ALTER TABLE `users` MODIFY `email` varchar(320) NOT NULL
ALTER TABLE `users` RENAME COLUMN `name` TO `full_name`
ALTER TABLE users DROP COLUMN legacy
RENAME TABLE `users_tmp` TO `users`
DROP INDEX `index_users_on_name` ON `users`
CREATE TABLE IF NOT EXISTS `flyway_schema_history` (`installed_rank` INT NOT NULL, `version` VARCHAR(50), `description` VARCHAR(200) NOT NULL, `checksum` INT, `installed_on` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, `success` BOOL NOT NULL, CONSTRAINT `flyway_schema_history_pk` PRIMARY KEY (`installed_rank`)) ENGINE=InnoDB
SELECT GET_LOCK('flyway-1', 10)
CREATE TABLE DATABASECHANGELOGLOCK (ID INT NOT NULL, `LOCKED` BIT(1) NOT NULL, LOCKGRANTED datetime NULL, LOCKEDBY VARCHAR(255) NULL, CONSTRAINT PK_DATABASECHANGELOGLOCK PRIMARY KEY (ID))
UPDATE DATABASECHANGELOGLOCK SET `LOCKED` = 1, LOCKEDBY = 'host', LOCKGRANTED = NOW() WHERE ID = 1 AND `LOCKED` = 0
CREATE TABLE schema_migrations (version bigint NOT NULL, dirty boolean NOT NULL, PRIMARY KEY (version))
TRUNCATE `schema_migrations`
CREATE VIEW active_users AS SELECT id, email FROM users WHERE deleted_at IS NULL
CREATE DATABASE IF NOT EXISTS app DEFAULT CHARACTER SET utf8mb4
LOCK TABLES `users` WRITE
UNLOCK TABLES
# mysqldump headers and bodies every server runs
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */
/*!40101 SET NAMES utf8mb4 */
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */
/*!40000 ALTER TABLE `users` DISABLE KEYS */
# common application shapes
SELECT * FROM orders WHERE created_at > NOW() - INTERVAL 1 DAY ORDER BY id DESC LIMIT 50
SELECT u.id, COUNT(o.id) FROM users u LEFT JOIN orders o ON o.user_id = u.id GROUP BY u.id HAVING COUNT(o.id) > 3
SELECT * FROM products WHERE MATCH(name, description) AGAINST ('+red -blue' IN BOOLEAN MODE)
SELECT JSON_EXTRACT(doc, '$.a') FROM docs WHERE id = 1
# MySQL 8 only (MariaDB has no ->>):
SELECT doc->>'$.name' FROM docs WHERE id = 1
SELECT * FROM t WHERE a = 'it\'s' OR b = "double"
SELECT * FROM t WHERE flag = 1 OR flag = 2
UPDATE counters SET n = n + 1 WHERE name = 'hits' LIMIT 1
DELETE FROM queue WHERE id IN (SELECT id FROM (SELECT id FROM queue ORDER BY id LIMIT 10) AS x)
INSERT INTO t (a) SELECT a FROM s WHERE a > 1
REPLACE INTO kv (k, v) VALUES ('a', 'b')
INSERT IGNORE INTO tags (name) VALUES ('x')
WITH recent AS (SELECT * FROM orders WHERE created_at > '2026-01-01') SELECT COUNT(*) FROM recent
WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 10) SELECT n FROM seq
SELECT a FROM t1 UNION SELECT a FROM t2
SELECT SLEEP(1)
DO SLEEP(0.5)
SELECT * FROM t FORCE INDEX (idx_a) WHERE a = 1
SELECT /*+ MAX_EXECUTION_TIME(1000) */ * FROM t WHERE a = 1
SELECT * FROM t -- trailing note
SELECT * FROM t # trailing note
"SELECT a, -- first\n b FROM t"
CALL refresh_stats(1)
EXPLAIN SELECT * FROM t WHERE a = 1
PREPARE s1 FROM 'SELECT * FROM t WHERE id = ?'
EXECUTE s1 USING @id
DEALLOCATE PREPARE s1
SELECT 1; SELECT 2
INSERT INTO t (a) VALUES (1); SELECT LAST_INSERT_ID()
SELECT * FROM `select` WHERE `where` = 1
SELECT 'SELECT * FROM mysql.user' AS note
SELECT '1 OR 1=1' FROM t WHERE id = 3
GRANT SELECT, INSERT ON app.* TO 'app'@'%'
SELECT LPAD(id, 10, '0') FROM t
# drivers' connection setup: Connector/J, MariaDB Connector/J, mysqlclient, PDO, mysql2, the mariadb CLI
/* mysql-connector-java-8.0.33 (Revision: 7d6b0800528b6b25c68b52dc10d6c1c8429c100c) */SELECT  @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, @@character_set_connection AS character_set_connection, @@character_set_results AS character_set_results, @@character_set_server AS character_set_server, @@collation_server AS collation_server, @@collation_connection AS collation_connection, @@init_connect AS init_connect, @@interactive_timeout AS interactive_timeout, @@license AS license, @@lower_case_table_names AS lower_case_table_names, @@max_allowed_packet AS max_allowed_packet, @@net_write_timeout AS net_write_timeout, @@performance_schema AS performance_schema, @@sql_mode AS sql_mode, @@system_time_zone AS system_time_zone, @@time_zone AS time_zone, @@transaction_isolation AS transaction_isolation, @@wait_timeout AS wait_timeout
SELECT @@session.transaction_read_only
SELECT @@max_allowed_packet,@@system_time_zone,@@time_zone,@@auto_increment_increment
SET SESSION autocommit=1,sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')
select @@version_comment limit 1
SELECT @@SESSION.sql_mode
SET SESSION sql_mode='NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'
SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;
/* ApplicationName=DBeaver 24.1.0 - Main */ SELECT DATABASE()
# WordPress, Laravel, Sequelize, Prisma
SELECT option_value FROM wp_options WHERE option_name = 'siteurl' LIMIT 1
SELECT SQL_CALC_FOUND_ROWS wp_posts.ID FROM wp_posts WHERE 1=1 AND wp_posts.post_type = 'post' AND ((wp_posts.post_status = 'publish')) ORDER BY wp_posts.post_date DESC LIMIT 0, 10
SELECT FOUND_ROWS()
DELETE FROM wp_options WHERE option_name LIKE '\\_transient\\_%' AND option_name NOT LIKE '\\_transient\\_timeout\\_%'
INSERT INTO `wp_options` (`option_name`, `option_value`, `autoload`) VALUES ('cron', 'a:1:{}', 'yes') ON DUPLICATE KEY UPDATE `option_name` = VALUES(`option_name`), `option_value` = VALUES(`option_value`), `autoload` = VALUES(`autoload`)
select * from information_schema.tables where table_schema = 'app' and table_name = 'migrations' and table_type = 'BASE TABLE'
select max(`batch`) as aggregate from `migrations`
SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA = 'app'
SHOW INDEX FROM `users` FROM `app`
SELECT `id`, `checksum`, `finished_at`, `migration_name`, `logs`, `rolled_back_at`, `started_at`, `applied_steps_count` FROM `_prisma_migrations` ORDER BY `started_at` ASC
DESCRIBE `users`
EXPLAIN FORMAT=JSON SELECT * FROM users WHERE id = 1
SELECT * FROM users WHERE name = 'O\'Brien' AND note = "say \"hi\""
SELECT * FROM users WHERE id = 1 /* trace_id=4bf92f3577b34da6 */
SELECT 1 FROM DUAL
SET STATEMENT max_statement_time=30 FOR SELECT id, name FROM customers WHERE id = 42

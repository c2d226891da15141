// Package discover finds the PostgreSQL and MySQL/MariaDB servers of a host
// from a /proc tree (discover.go), for sqlfwd's zero-configuration start.
package discover

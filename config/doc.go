// Package config is sqlfwd's configuration: the YAML layout
// (docs/config.md documents every key), its defaults and checks
// (Normalize), and what the files it names build: a database's policy
// engine and its TLS configurations. Check does all of it without opening
// anything, for sqlfwd --check-config and fwctl config validate.
//
// The daemon runs what config describes; config never imports daemon,
// relay, bpf or cgroupstats, so fwctl validates a configuration without
// linking the daemon.
package config

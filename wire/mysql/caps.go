package mysql

// Capability flags, status flags and command bytes. MySQL's names come from
// include/mysql_com.h (MySQL 8.0), MariaDB's from include/mariadb_com.h
// (MariaDB Connector/C) and include/mysql_com.h (MariaDB server). A Caps
// holds the 32 flags both servers define in its low half and MariaDB's
// extended capabilities (sent in the greeting's reserved bytes, see
// ParseHandshake) in its high half, as MariaDB numbers them.

import "strings"

// Caps is a set of capability flags.
type Caps uint64

const (
	// CapLongPassword is CLIENT_LONG_PASSWORD; MariaDB calls it
	// CLIENT_MYSQL and a MariaDB server clears it in its greeting to say
	// that the extended capabilities follow.
	CapLongPassword  Caps = 1 << 0
	CapFoundRows     Caps = 1 << 1 // CLIENT_FOUND_ROWS
	CapLongFlag      Caps = 1 << 2 // CLIENT_LONG_FLAG
	CapConnectWithDB Caps = 1 << 3 // CLIENT_CONNECT_WITH_DB
	CapNoSchema      Caps = 1 << 4 // CLIENT_NO_SCHEMA
	// CapCompress is CLIENT_COMPRESS: zlib-compressed packets after the
	// login (compress.go).
	CapCompress      Caps = 1 << 5
	CapODBC          Caps = 1 << 6  // CLIENT_ODBC
	CapLocalFiles    Caps = 1 << 7  // CLIENT_LOCAL_FILES: LOAD DATA LOCAL
	CapIgnoreSpace   Caps = 1 << 8  // CLIENT_IGNORE_SPACE
	CapProtocol41    Caps = 1 << 9  // CLIENT_PROTOCOL_41
	CapInteractive   Caps = 1 << 10 // CLIENT_INTERACTIVE
	CapSSL           Caps = 1 << 11 // CLIENT_SSL
	CapIgnoreSigpipe Caps = 1 << 12 // CLIENT_IGNORE_SIGPIPE
	CapTransactions  Caps = 1 << 13 // CLIENT_TRANSACTIONS
	CapReserved      Caps = 1 << 14 // CLIENT_RESERVED (was CLIENT_PROTOCOL_41 in 4.1)
	// CapSecureConnection is CLIENT_SECURE_CONNECTION (MySQL 8:
	// CLIENT_RESERVED2): the auth response has a 1-byte length.
	CapSecureConnection Caps = 1 << 15
	CapMultiStatements  Caps = 1 << 16 // CLIENT_MULTI_STATEMENTS
	CapMultiResults     Caps = 1 << 17 // CLIENT_MULTI_RESULTS
	CapPSMultiResults   Caps = 1 << 18 // CLIENT_PS_MULTI_RESULTS
	CapPluginAuth       Caps = 1 << 19 // CLIENT_PLUGIN_AUTH
	CapConnectAttrs     Caps = 1 << 20 // CLIENT_CONNECT_ATTRS
	// CapPluginAuthLenencData is CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA.
	CapPluginAuthLenencData Caps = 1 << 21
	// CapCanHandleExpiredPasswords is CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS.
	CapCanHandleExpiredPasswords Caps = 1 << 22
	CapSessionTrack              Caps = 1 << 23 // CLIENT_SESSION_TRACK
	// CapDeprecateEOF is CLIENT_DEPRECATE_EOF: an OK packet with header
	// 0xfe ends a result set instead of an EOF packet.
	CapDeprecateEOF Caps = 1 << 24
	// CapOptionalResultsetMetadata is MySQL 8's
	// CLIENT_OPTIONAL_RESULTSET_METADATA.
	CapOptionalResultsetMetadata Caps = 1 << 25
	// CapZstdCompression is MySQL 8's CLIENT_ZSTD_COMPRESSION_ALGORITHM;
	// stripped with CapCompress.
	CapZstdCompression Caps = 1 << 26
	// CapQueryAttributes is MySQL 8's CLIENT_QUERY_ATTRIBUTES: COM_QUERY
	// and COM_STMT_EXECUTE carry named parameters before the statement.
	CapQueryAttributes Caps = 1 << 27
	// CapMultiFactorAuth is MySQL 8's MULTI_FACTOR_AUTHENTICATION.
	CapMultiFactorAuth Caps = 1 << 28
	// CapCapabilityExtension is MySQL 8's CLIENT_CAPABILITY_EXTENSION;
	// MariaDB's CLIENT_PROGRESS_OBSOLETE.
	CapCapabilityExtension Caps = 1 << 29
	CapSSLVerifyServerCert Caps = 1 << 30 // CLIENT_SSL_VERIFY_SERVER_CERT
	CapRememberOptions     Caps = 1 << 31 // CLIENT_REMEMBER_OPTIONS

	// MariaDB's extended capabilities (MARIADB_CLIENT_*).

	// CapMariaDBProgress is MARIADB_CLIENT_PROGRESS: the server may send
	// progress reports (ERR packets with error number 0xffff) while a
	// statement runs.
	CapMariaDBProgress Caps = 1 << 32
	// CapMariaDBComMulti is MARIADB_CLIENT_COM_MULTI (removed in 10.6): one
	// COM_MULTI carries several commands the relay would not see, so it is
	// stripped.
	CapMariaDBComMulti Caps = 1 << 33
	// CapMariaDBStmtBulkOperations is MARIADB_CLIENT_STMT_BULK_OPERATIONS:
	// COM_STMT_BULK_EXECUTE.
	CapMariaDBStmtBulkOperations Caps = 1 << 34
	// CapMariaDBExtendedMetadata is MARIADB_CLIENT_EXTENDED_METADATA
	// (column definitions carry type details).
	CapMariaDBExtendedMetadata Caps = 1 << 35
	// CapMariaDBCacheMetadata is MARIADB_CLIENT_CACHE_METADATA: a prepared
	// statement's result may omit its column definitions (see
	// ParseColumnCount).
	CapMariaDBCacheMetadata Caps = 1 << 36
	// CapMariaDBBulkUnitResults is MARIADB_CLIENT_BULK_UNIT_RESULTS.
	CapMariaDBBulkUnitResults Caps = 1 << 37
)

// DefaultStrip is what a relay clears from the server's greeting: MySQL 8's
// zstd compression, which it does not inflate (zlib's CLIENT_COMPRESS it
// follows: compress.go), the COM_MULTI that would hide commands from
// it, and CLIENT_SSL, which is the server leg's: a relay that terminates
// TLS offers it again for its own client leg (the bytes after an
// SSLRequest are TLS records).
const DefaultStrip = CapZstdCompression | CapSSL | CapMariaDBComMulti

// Lower, Upper and Extended are the three 16/16/32-bit parts a greeting
// sends them in.
func (c Caps) Lower() uint16    { return uint16(c) }
func (c Caps) Upper() uint16    { return uint16(c >> 16) }
func (c Caps) Extended() uint32 { return uint32(c >> 32) }

// Has reports whether every flag of x is in c.
func (c Caps) Has(x Caps) bool { return c&x == x }

// Status flags (SERVER_STATUS_* and SERVER_* of include/mysql_com.h) in OK
// and EOF packets and the greeting.
const (
	StatusInTrans             uint16 = 1 << 0  // SERVER_STATUS_IN_TRANS
	StatusAutocommit          uint16 = 1 << 1  // SERVER_STATUS_AUTOCOMMIT
	StatusMoreResultsExist    uint16 = 1 << 3  // SERVER_MORE_RESULTS_EXISTS
	StatusNoGoodIndexUsed     uint16 = 1 << 4  // SERVER_QUERY_NO_GOOD_INDEX_USED
	StatusNoIndexUsed         uint16 = 1 << 5  // SERVER_QUERY_NO_INDEX_USED
	StatusCursorExists        uint16 = 1 << 6  // SERVER_STATUS_CURSOR_EXISTS
	StatusLastRowSent         uint16 = 1 << 7  // SERVER_STATUS_LAST_ROW_SENT
	StatusDBDropped           uint16 = 1 << 8  // SERVER_STATUS_DB_DROPPED
	StatusNoBackslashEscapes  uint16 = 1 << 9  // SERVER_STATUS_NO_BACKSLASH_ESCAPES
	StatusMetadataChanged     uint16 = 1 << 10 // SERVER_STATUS_METADATA_CHANGED
	StatusQueryWasSlow        uint16 = 1 << 11 // SERVER_QUERY_WAS_SLOW
	StatusPSOutParams         uint16 = 1 << 12 // SERVER_PS_OUT_PARAMS
	StatusInTransReadonly     uint16 = 1 << 13 // SERVER_STATUS_IN_TRANS_READONLY
	StatusSessionStateChanged uint16 = 1 << 14 // SERVER_SESSION_STATE_CHANGED
	// StatusAnsiQuotes is MariaDB's SERVER_STATUS_ANSI_QUOTES (sql_mode
	// has ANSI_QUOTES).
	StatusAnsiQuotes uint16 = 1 << 15
)

// Command bytes: the first payload byte of every packet a client sends in
// the command phase (enum_server_command, include/my_command.h; MariaDB's
// include/mysql_com.h).
const (
	ComSleep            = 0x00
	ComQuit             = 0x01
	ComInitDB           = 0x02
	ComQuery            = 0x03
	ComFieldList        = 0x04
	ComCreateDB         = 0x05
	ComDropDB           = 0x06
	ComRefresh          = 0x07
	ComShutdown         = 0x08
	ComStatistics       = 0x09
	ComProcessInfo      = 0x0a
	ComConnect          = 0x0b
	ComProcessKill      = 0x0c
	ComDebug            = 0x0d
	ComPing             = 0x0e
	ComTime             = 0x0f
	ComDelayedInsert    = 0x10
	ComChangeUser       = 0x11
	ComBinlogDump       = 0x12
	ComTableDump        = 0x13
	ComConnectOut       = 0x14
	ComRegisterSlave    = 0x15
	ComStmtPrepare      = 0x16
	ComStmtExecute      = 0x17
	ComStmtSendLongData = 0x18
	ComStmtClose        = 0x19
	ComStmtReset        = 0x1a
	ComSetOption        = 0x1b
	ComStmtFetch        = 0x1c
	ComDaemon           = 0x1d
	ComBinlogDumpGTID   = 0x1e
	ComResetConnection  = 0x1f
	ComClone            = 0x20 // MySQL 8
	// ComSubscribeGroupReplicationStream is MySQL 8's
	// COM_SUBSCRIBE_GROUP_REPLICATION_STREAM.
	ComSubscribeGroupReplicationStream = 0x21
	// MariaDB only.
	ComStmtBulkExecute = 0xfa
	ComSlaveWorker     = 0xfb
	ComSlaveIO         = 0xfc
	ComSlaveSQL        = 0xfd
	ComMulti           = 0xfe
)

var commandNames = [256]string{
	ComSleep: "COM_SLEEP", ComQuit: "COM_QUIT", ComInitDB: "COM_INIT_DB", ComQuery: "COM_QUERY",
	ComFieldList: "COM_FIELD_LIST", ComCreateDB: "COM_CREATE_DB", ComDropDB: "COM_DROP_DB",
	ComRefresh: "COM_REFRESH", ComShutdown: "COM_SHUTDOWN", ComStatistics: "COM_STATISTICS",
	ComProcessInfo: "COM_PROCESS_INFO", ComConnect: "COM_CONNECT", ComProcessKill: "COM_PROCESS_KILL",
	ComDebug: "COM_DEBUG", ComPing: "COM_PING", ComTime: "COM_TIME", ComDelayedInsert: "COM_DELAYED_INSERT",
	ComChangeUser: "COM_CHANGE_USER", ComBinlogDump: "COM_BINLOG_DUMP", ComTableDump: "COM_TABLE_DUMP",
	ComConnectOut: "COM_CONNECT_OUT", ComRegisterSlave: "COM_REGISTER_SLAVE",
	ComStmtPrepare: "COM_STMT_PREPARE", ComStmtExecute: "COM_STMT_EXECUTE",
	ComStmtSendLongData: "COM_STMT_SEND_LONG_DATA", ComStmtClose: "COM_STMT_CLOSE",
	ComStmtReset: "COM_STMT_RESET", ComSetOption: "COM_SET_OPTION", ComStmtFetch: "COM_STMT_FETCH",
	ComDaemon: "COM_DAEMON", ComBinlogDumpGTID: "COM_BINLOG_DUMP_GTID",
	ComResetConnection: "COM_RESET_CONNECTION", ComClone: "COM_CLONE",
	ComSubscribeGroupReplicationStream: "COM_SUBSCRIBE_GROUP_REPLICATION_STREAM",
	ComStmtBulkExecute:                 "COM_STMT_BULK_EXECUTE", ComSlaveWorker: "COM_SLAVE_WORKER",
	ComSlaveIO: "COM_SLAVE_IO", ComSlaveSQL: "COM_SLAVE_SQL", ComMulti: "COM_MULTI",
}

// IsReplication reports whether cmd is one of the commands only a replica
// sends to its primary: COM_REGISTER_SLAVE, COM_BINLOG_DUMP and
// COM_BINLOG_DUMP_GTID.
func IsReplication(cmd byte) bool {
	return cmd == ComRegisterSlave || cmd == ComBinlogDump || cmd == ComBinlogDumpGTID
}

// CommandByName returns the command byte of a protocol name
// ("COM_BINLOG_DUMP", in any case).
func CommandByName(name string) (byte, bool) {
	for c, n := range commandNames {
		if n != "" && strings.EqualFold(n, name) {
			return byte(c), true
		}
	}
	return 0, false
}

// CommandName returns the protocol name of a command byte ("COM_QUERY"), or
// "" for a byte no server defines.
func CommandName(cmd byte) string { return commandNames[cmd] }

// CommandTypes has every command byte some server defines: SetTypes on the
// client leg's Framer in the command phase. Which of them a relay lets
// through is the relay's business.
var CommandTypes = func() *[256]bool {
	var t [256]bool
	for i, n := range commandNames {
		t[i] = n != ""
	}
	return &t
}()

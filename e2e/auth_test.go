package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestAuthPassthrough: sqlfwd relays the server's authentication exchange,
// so roles that need a SCRAM-SHA-256 or MD5 password log in through it, and a
// wrong password is refused by PostgreSQL with its own error.
func TestAuthPassthrough(t *testing.T) {
	host, port := target(t)
	tests := []struct {
		name, user, password string
		wantCode             string // "" for success
	}{
		{"scram", pg.ScramUser, pg.ScramPassword, ""},
		{"md5", pg.MD5User, pg.MD5Password, ""},
		{"scram wrong password", pg.ScramUser, "not-" + pg.ScramPassword, "28P01"},
		{"md5 wrong password", pg.MD5User, "not-" + pg.MD5Password, "28P01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			connString := fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable connect_timeout=5",
				host, port, tt.user, tt.password, pg.Database)
			c, err := pgx.Connect(ctx, connString)
			if tt.wantCode != "" {
				if err == nil {
					c.Close(ctx)
				}
				if got := errCode(err); got != tt.wantCode {
					t.Errorf("pgx as %s with a wrong password: got %q (%v), want %s", tt.user, got, err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("pgx as %s: got %v, want a connection", tt.user, err)
			}
			defer c.Close(ctx)
			var who string
			if err := c.QueryRow(ctx, "select current_user").Scan(&who); err != nil || who != tt.user {
				t.Errorf("pgx as %s: select current_user got %q, %v; want %q", tt.user, who, err, tt.user)
			}

			res := runTool(t, 30*time.Second, "", []string{"PGPASSWORD=" + tt.password}, "psql",
				"-X", "-tA", "-w", "-h", host, "-p", strconv.Itoa(port), "-U", tt.user, "-d", pg.Database, "-c", "select current_user")
			if res.Exit != 0 || strings.TrimSpace(res.Stdout) != tt.user {
				t.Errorf("psql as %s: got %s\nwant exit 0 and %q", tt.user, res, tt.user)
			}
		})
	}
}

package control

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

func TestClientCall(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "control.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"api_version":1,"q":"` + r.URL.Query().Get("database") + `"}`))
	})
	mux.HandleFunc("POST /v1/mode", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `mode "x": want enforce`, http.StatusBadRequest)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	c := Client{Socket: sock}
	body, err := c.Call(http.MethodGet, "/v1/status", map[string][]string{"database": {"app"}})
	if err != nil || string(body) != `{"api_version":1,"q":"app"}` {
		t.Errorf("GET /v1/status: %q, %v", body, err)
	}
	if _, err := c.Call(http.MethodPost, "/v1/mode", nil); err == nil || !strings.Contains(err.Error(), "400 Bad Request") || !strings.Contains(err.Error(), `mode "x"`) {
		t.Errorf("POST /v1/mode: err %v; want the status and the daemon's reason", err)
	}
	bad := Client{Socket: filepath.Join(t.TempDir(), "none.sock")}
	if _, err := bad.Call(http.MethodGet, "/v1/status", nil); err == nil || !strings.Contains(err.Error(), "cannot reach sqlfwd") {
		t.Errorf("missing socket: err %v", err)
	}
}

// Package bpf is the only part of sqlfw that knows the kernel: it loads and
// attaches the eBPF programs that steer database connections to the daemon,
// and gives the daemon what the kernel learnt about each one. It is plumbing
// only: which addresses to protect and what to do with a connection is the
// daemon's business.
//
// # App-host mode (redirect.c, LoadRedirect)
//
// Programs attached to a cgroup2 directory (the mount point, from
// cgroupstats.Cgroup2Mount, in production):
//
//   - cgroup/connect4, cgroup/connect6: a TCP connect() to an address in
//     protected_addrs is rewritten to the daemon's listener, unless the
//     socket carries the daemon's SO_MARK, its cookie is in own_cookies (the
//     daemon's upstream dialer puts each socket there between socket() and
//     connect(): a cookie holds in any PID namespace, the daemon's getpid()
//     does not), or the caller's network namespace is not the daemon's (cgroup hooks are
//     not netns-aware: without the cookie check a container's own
//     127.0.0.1:5432 would be hijacked). An IPv4-mapped IPv6 destination is
//     matched against the IPv4 entries and sent to the mapped IPv4 listener.
//     The original destination and the caller (tgid, uid, comm, cgroup id,
//     network namespace) go into origin_by_cookie, keyed by socket cookie.
//   - Pods (PodListen4/6): a connect from another network namespace (a pod
//     on a Kubernetes node, whose cgroup is below the attached one) to a
//     protected address that is not loopback or unspecified goes to the pod
//     listener, a node address the daemon listens on in its own namespace
//     and the pods route to. The rest of the flow is the same: sockops runs
//     on the pod's socket in the pod's namespace, so the by-client key is
//     the pod's address, which is the peer the daemon sees (no NAT between
//     a pod and its node). A pod's loopback is its own and is never
//     redirected (SkippedNetns), and pod sockets are never spliced: their
//     traffic keeps crossing the veth and the pod's network policies.
//   - sockops: on TCP_CONNECT_CB, when the local port is known, the entry is
//     copied into origin_by_client keyed by the client's local address,
//     which is the peer address the daemon sees on accept; Redirect.Origin
//     takes it with LookupAndDelete. On STATE_CB (enabled per redirected
//     socket) reaching TCP_CLOSE both entries are removed, the by-client one
//     only if it still belongs to this socket. With Sockmap on, it also puts
//     redirected client sockets (ACTIVE_ESTABLISHED) and the daemon's
//     sockets accepted from them (PASSIVE_ESTABLISHED) into relay_socks.
//     With SpliceUpstream too, the daemon's own socket to a protected
//     address (ACTIVE_ESTABLISHED; its tuple as the database will see it
//     goes into upstream_legs) and the database's socket whose tuple is
//     there (PASSIVE_ESTABLISHED, seen only in a cgroup of SpliceCgroups:
//     an accepted socket belongs to its listener's cgroup). Every byte
//     still passes through the daemon; the leg only skips loopback TCP.
//     UpstreamOnly (db-host mode, where the clients come from the network
//     and the daemon dials the database on loopback) loads the same object
//     for that alone: no connect, getpeername or sockops program on
//     Cgroup, sockops on SpliceCgroups only, Protected = the upstreams.
//   - cgroup/getpeername4/6: a redirected client sees the database's
//     address, not the listener's.
//   - sk_msg on relay_socks: each sendmsg on one local leg is put straight on
//     the receive queue of the other (bpf_msg_redirect_hash with
//     BPF_F_INGRESS), skipping the loopback TCP stack. If the peer is not in
//     the map yet, the data goes through TCP and the socket is listed in
//     relay_tcp_only so that it stays on TCP: the reader drains the ingress
//     queue before the TCP queue, so mixing would reorder the stream.
//     Redirected data is invisible to splice(2): relay with Read/Write
//     loops, never io.Copy.
//
// Both LRU maps hold 65536 entries. An LRU never reports "full": under
// pressure it evicts, and the daemon then finds no Origin for an evicted
// connection (and should refuse it). A failed update is counted in MapFull
// and, with FailClosed, fails the connect() with EPERM.
//
// The connection and its sockets keep working after Close; only new
// connects go direct. Links are tied to the daemon's file descriptors, so a
// killed daemon fails open.
//
// # Fast path (fastpath.c, LoadFast; experimental, intercept.fastpath)
//
// The server-to-client direction of an intercepted PostgreSQL session,
// relayed by the kernel where the session need not see it. The
// client-to-server direction stays in user space: no statement reaches the
// server unjudged.
//
//   - The daemon's upstream socket goes into fast_in (a SOCKMAP with an
//     sk_skb verdict program, no stream parser) and its client leg into
//     fast_out, before the startup message is sent; a slot of fast_slots
//     (an mmapped array) holds the session's state. With Sockmap on, the
//     client leg is listed in relay_tcp_only: the kernel's writes to it
//     and the daemon's then both go through TCP, in the order made.
//   - A slot is off until user space resumes it (FastLeg.Resume), which it
//     does only at a message boundary with everything it read written,
//     after startup and with no poison, verdict-memory change, idle timer
//     or drain pending. The program turns it on at the next segment only
//     if it has passed user space no more bytes than user space said it
//     read.
//   - While on, the program frames each segment from the slot's position
//     (a message may span segments) and redirects the whole segment to the
//     client leg's send side if it holds only ParseComplete, BindComplete,
//     CloseComplete, CommandComplete, DataRow, EmptyQueryResponse, NoData,
//     PortalSuspended, ParameterDescription, RowDescription or
//     ReadyForQuery with the transaction status user space last saw; it
//     counts those ReadyForQuery messages. Anything else (ErrorResponse,
//     ParameterStatus, Notice, Notification, Copy*, a status change, more
//     than 128 messages in one segment) turns the slot off and the segment
//     and everything after it go to user space, with where the segment
//     starts in the message the kernel was relaying (FastPrefix: those
//     bytes go to the client as they are).
//   - Halt (before any user-space write to the client, and before sending
//     the server a message whose replies user space must see) stores
//     off_req, waits until no program run is in progress (busy, a
//     Dekker-style handshake on sequentially consistent atomics: a run
//     that started before the store has finished, a later one sees it),
//     replays the counted ReadyForQuery messages into the session, then
//     waits until the client leg's written bytes (tcpi_bytes_acked, then
//     SIOCOUTQ: never more than the truth) reach what user space wrote plus
//     what the kernel redirected. sk_skb redirects are asynchronous (a
//     kworker sends them from the target's psock queue); this wait is what
//     orders the daemon's next write after them.
//
// What it cannot do: TLS legs, unix sockets, MySQL. The session's timing
// of responses the kernel relayed is not measured (statement counts and
// bytes are, at the next Halt). The kernel queues redirected segments
// without bound when the client reads slowly (user space would stop
// reading the server); the kworker's CPU is outside sqlfwd's cgroup. A
// Halt polls (Gosched, then 20 µs sleeps) and gives up, closing the
// session, after 100,000 polls. Proved by tests, not by a model checker:
// e2e TestInterceptFastpath compares psql, pgbench and pipelined pgx
// answers with and without it and checks the server log.
//
// # Unix sockets (unix.c, LoadUnixRedirect; kernel ≥ 6.7)
//
// cgroup/connect_unix reads the requested path through the kernel context
// (bpf_cast_to_kern_ctx, CO-RE against vmlinux.h) and rewrites protected
// paths with the kfunc bpf_sock_addr_set_sun_path. Each protected path maps
// to its own daemon listener path, so the daemon knows the original from the
// listener that accepted and the client from SO_PEERCRED.
//
// # DB-host mode (steer.c, LoadSteer)
//
// An sk_lookup program on the database host's network namespace picks the
// daemon's listener (steer_listeners, a SOCKMAP) with bpf_sk_assign for
// inbound TCP to steer_ports on any address but loopback, even when the
// database is bound to 0.0.0.0. The original destination is the local
// address of the accepted socket; the daemon reaches the database over
// loopback, which is not steered. SOCKMAPs cannot hold MPTCP sockets, and Go
// listeners are MPTCP by default since Go 1.24.
//
// # Byte order in the context structs
//
// The kernel mixes byte orders, and the programs normalise once:
//
//   - bpf_sock_addr (connect, getpeername): user_ip4 and user_ip6[] are
//     network order; user_port is the network-order port in the low 16 bits.
//   - bpf_sock_ops and sk_msg_md: local_ip4/6 and remote_ip4/6 network order;
//     local_port host order; remote_port is the network-order port shifted
//     into the upper 16 bits on little-endian, so bpf_ntohl gives the port.
//   - bpf_sk_lookup: local_ip4/6 network order, local_port host order,
//     remote_port network order.
//   - bpf_sock.mark: host order.
//
// The map keys (struct addr_key, struct tuple_key) store addresses in
// network order and ports in host order; IPv4 and IPv4-mapped IPv6 are both
// AF_INET with the address in ip[0]. In Go an address word is the 4 bytes of
// the address read as a native-endian uint32 (ip4Word).
//
// # Privileges and fallback
//
// Loading needs CAP_BPF + CAP_NET_ADMIN (or CAP_SYS_ADMIN). A refusal wraps
// ErrNoPrivilege (EPERM is not ebpf.ErrNotSupported); a missing program
// type, hook or kfunc wraps ErrUnsupported. A program the verifier read and
// rejected (its log says why) is neither, whatever the errno: it is a broken
// object, and the daemon stops rather than fall back. The unix-name guard
// the kernel refuses unread is UnixRedirect.GuardErr (ErrGuardRefused); a
// guard failing otherwise is LoadUnixRedirect's error. Probe and ProbeUnix
// check without attaching.
//
// # Regenerating
//
// go generate ./bpf (the Makefile's generate target) needs clang, llvm-strip
// and bpftool; see gen.go. The generated *_bpfel.go and *_bpfel.o are
// checked in so that building needs neither.
package bpf

//go:build ignore

// Experimental server-to-client fast path for intercepted PostgreSQL
// sessions (LoadFast; see doc.go "Fast path"). The daemon's upstream socket
// is in fast_in with this sk_skb verdict program; the daemon's client leg is
// in fast_out. While a slot is on, each segment the server sends that holds
// only messages user space need not see is redirected to the client leg's
// send side; anything else turns the slot off and is passed to user space,
// which then waits until the kernel's queue has drained before it writes.

#include "common.h"

char _license[] SEC("license") = "GPL";

#define FAST_SLOTS 4096
// Messages walked per segment; a segment with more goes to user space.
#define FAST_STEPS 128

// fast_slot is one session's state, shared with user space through an
// mmap of fast_slots. User space writes only off_req, arm_req and
// arm_read; the program writes the rest. busy brackets every run, so that
// user space, after storing off_req, knows when no run can still redirect.
struct fast_slot {
	__u64 off_req;  // user: nonzero stops redirection at once
	__u64 arm_req;  // user: generation of the last request to turn on
	__u64 arm_read; // user: bytes it had read when it asked
	// user: the transaction status of the last ReadyForQuery it saw; only
	// ReadyForQuery messages with the same status are relayed here, so
	// that user space can replay them as a count.
	__u64 arm_status;
	__u64 busy;     // program runs in progress
	__u64 on;
	__u64 arm_done;   // the generation that turned the slot on
	__u64 passed;     // bytes passed to user space
	__u64 redirected; // bytes redirected to the client leg
	__u64 ready;      // ReadyForQuery messages redirected
	__u64 status;     // their transaction status (arm_status)
	// Where the next byte is within the message in progress: the body
	// bytes left, or the length bytes left to read and those read so far.
	// After the slot turns off, this is where the first passed byte is.
	__u64 rem;
	__u64 hdr_need;
	__u64 hdr_acc;
	// user: the socket cookie of the upstream socket the slot is for, set
	// before that socket joins fast_in; a late run on an earlier session's
	// socket finds another cookie and leaves the slot alone.
	__u64 cookie;
	__u64 pad[1];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FAST_SLOTS);
	__type(key, __u32);
	__type(value, struct fast_slot);
} fast_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, FAST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} fast_in SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, FAST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} fast_out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FAST_SLOTS);
	__type(key, __u64);
	__type(value, __u32);
} fast_slot_by_cookie SEC(".maps");

// boring: the backend messages user space does not need while the slot is
// on (the daemon turns it on only when no poison or verdict-memory change
// is pending, so ParseComplete and CloseComplete are among them).
// ReadyForQuery is counted here instead.
static __always_inline int boring(__u8 t)
{
	switch (t) {
	case '1': // ParseComplete
	case '2': // BindComplete
	case '3': // CloseComplete
	case 'C': // CommandComplete
	case 'D': // DataRow
	case 'I': // EmptyQueryResponse
	case 'n': // NoData
	case 's': // PortalSuspended
	case 't': // ParameterDescription
	case 'T': // RowDescription
	case 'Z': // ReadyForQuery
		return 1;
	}
	return 0;
}

struct walk {
	__u32 pos, len;
	__u64 rem, need, acc, ready, status;
};

// walk_skb frames the segment from the slot's position. 0: every message
// in it is boring (w holds the position after it); -1: user space must see
// it.
static __always_inline int walk_skb(struct __sk_buff *skb, struct walk *w)
{
	__u8 h[6];
	__u8 b;

	for (int i = 0; i < FAST_STEPS; i++) {
		if (w->pos >= w->len)
			return 0;
		if (w->need) {
			if (bpf_skb_load_bytes(skb, w->pos, &b, 1) < 0)
				return -1;
			w->acc = (w->acc << 8) | b;
			w->pos++;
			w->need--;
			if (w->need == 0) {
				if (w->acc < 4 || w->acc > 0x7fffffff)
					return -1;
				w->rem = w->acc - 4;
			}
			continue;
		}
		if (w->rem) {
			__u32 left = w->len - w->pos;
			if (w->rem >= left) {
				w->rem -= left;
				w->pos = w->len;
				return 0;
			}
			w->pos += (__u32)w->rem;
			w->rem = 0;
			continue;
		}
		if (bpf_skb_load_bytes(skb, w->pos, h, 1) < 0)
			return -1;
		if (!boring(h[0]))
			return -1;
		if (h[0] == 'Z') {
			// Whole in this segment, or user space reads it.
			if (w->len - w->pos < 6 || bpf_skb_load_bytes(skb, w->pos, h, 6) < 0)
				return -1;
			if (h[1] != 0 || h[2] != 0 || h[3] != 0 || h[4] != 5)
				return -1;
			if (h[5] != w->status)
				return -1;
			w->ready++;
			w->pos += 6;
			continue;
		}
		if (w->len - w->pos >= 5) {
			// the whole header here: length and body skip in one step
			if (bpf_skb_load_bytes(skb, w->pos, h, 5) < 0)
				return -1;
			w->acc = ((__u64)h[1] << 24) | ((__u64)h[2] << 16) | ((__u64)h[3] << 8) | h[4];
			if (w->acc < 4 || w->acc > 0x7fffffff)
				return -1;
			w->pos += 5;
			w->rem = w->acc - 4;
			w->acc = 0;
			if (w->rem >= w->len - w->pos) {
				w->rem -= w->len - w->pos;
				w->pos = w->len;
				return 0;
			}
			w->pos += (__u32)w->rem;
			w->rem = 0;
			continue;
		}
		w->pos++;
		w->need = 4;
		w->acc = 0;
	}
	return w->pos >= w->len ? 0 : -1;
}

SEC("sk_skb/verdict")
int fast_verdict(struct __sk_buff *skb)
{
	__u64 cookie = bpf_get_socket_cookie(skb);
	__u32 *slotp = bpf_map_lookup_elem(&fast_slot_by_cookie, &cookie);
	struct fast_slot *st;
	struct walk w = {};
	__u32 slot;

	if (!slotp)
		return SK_PASS;
	slot = *slotp;
	st = bpf_map_lookup_elem(&fast_slots, &slot);
	if (!st)
		return SK_PASS;
	w.len = skb->len;

	__sync_fetch_and_add(&st->busy, 1);
	if (*(volatile __u64 *)&st->cookie != cookie) {
		__sync_fetch_and_add(&st->busy, -1);
		return SK_PASS;
	}
	if (*(volatile __u64 *)&st->off_req) {
		st->on = 0;
		goto pass;
	}
	if (!st->on) {
		__u64 req = *(volatile __u64 *)&st->arm_req;

		// On only when user space has read everything passed so far and
		// stood at a message boundary when it asked.
		if (req == st->arm_done || *(volatile __u64 *)&st->arm_read != st->passed)
			goto pass;
		st->arm_done = req;
		st->status = *(volatile __u64 *)&st->arm_status;
		st->on = 1;
		st->rem = 0;
		st->hdr_need = 0;
		st->hdr_acc = 0;
	}
	w.rem = st->rem;
	w.need = st->hdr_need;
	w.acc = st->hdr_acc;
	w.status = st->status;
	if (walk_skb(skb, &w) != 0) {
		st->on = 0; // st->rem.. stay where this segment starts
		goto pass;
	}
	if (bpf_sk_redirect_map(skb, &fast_out, slot, 0) != SK_PASS) {
		st->on = 0;
		goto pass;
	}
	st->rem = w.rem;
	st->hdr_need = w.need;
	st->hdr_acc = w.acc;
	st->ready += w.ready;
	st->redirected += w.len;
	__sync_fetch_and_add(&st->busy, -1);
	return SK_PASS;
pass:
	st->passed += w.len;
	__sync_fetch_and_add(&st->busy, -1);
	return SK_PASS;
}

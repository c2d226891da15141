// Package framebuf keeps the buffers the framers (wire/pg, wire/mysql)
// grow into for a message larger than their own buffer. A framer doubles
// its buffer until the message fits and, with a budget, gives the growth
// back once the message is taken; a 90 KB bulk INSERT allocated, zeroed
// and dropped 190 KB for each statement. Buffers of 64 KiB to 1 MiB (the
// powers of two a 32 KiB buffer doubles through) wait here between
// messages, in a sync.Pool per size, which the garbage collector empties
// as it would have collected them.
//
// A buffer given back must not be used again by its framer: a framer's
// message is valid until its next Fill, the point where it gives a grown
// buffer back, so nothing holds it then.
package framebuf

import (
	"math/bits"
	"sync"
	"unsafe"
)

const (
	minShift = 16 // 64 KiB
	maxShift = 20 // 1 MiB
)

// pools[i] holds buffers of 1<<(minShift+i) bytes, as pointers to their
// first byte (an interface holds a pointer without allocating).
var pools [maxShift - minShift + 1]sync.Pool

// class returns the pool of buffers of size bytes, or nil.
func class(size int) *sync.Pool {
	if size < 1<<minShift || size > 1<<maxShift || size&(size-1) != 0 {
		return nil
	}
	return &pools[bits.TrailingZeros(uint(size))-minShift]
}

// Pooled reports whether buffers of size bytes are kept.
func Pooled(size int) bool { return class(size) != nil }

// Get returns a buffer of size bytes, a kept one when there is one. Its
// content is what its last user left in it.
func Get(size int) []byte {
	if p := class(size); p != nil {
		if b, ok := p.Get().(*byte); ok {
			return unsafe.Slice(b, size)
		}
	}
	return make([]byte, size)
}

// Put keeps b for another Get of its size (if that size is kept); the
// caller does not use b after.
func Put(b []byte) {
	if p := class(len(b)); p != nil && cap(b) == len(b) {
		p.Put(unsafe.SliceData(b))
	}
}

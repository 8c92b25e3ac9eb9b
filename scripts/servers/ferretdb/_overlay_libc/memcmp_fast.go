// PATCHED (backoffice): added to modernc.org/libc; see scripts/stack/servers.ts.

//go:build linux && amd64

package libc

import (
	"bytes"
	"unsafe"
)

// memcmpFast is C's memcmp over n bytes at l and r: negative, zero or positive as the first
// differing byte of l is below, equal to or above r's. bytes.Compare compares words at a time
// where the generated Xmemcmp loops over bytes; callers read only the sign, as C allows.
func memcmpFast(l, r uintptr, n Tsize_t) int32 {
	if n == 0 {
		return 0
	}
	return int32(bytes.Compare(
		unsafe.Slice((*byte)(unsafe.Pointer(l)), n),
		unsafe.Slice((*byte)(unsafe.Pointer(r)), n),
	))
}

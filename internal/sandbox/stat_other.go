//go:build !linux

package sandbox

import (
	"io/fs"
	"syscall"
)

// statIDs: the inode off Linux (the change time's field differs between
// systems; mode, size, modification time and inode still tell a change).
func statIDs(fi fs.FileInfo) (ctime int64, ino, dev uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return 0, uint64(st.Ino), uint64(st.Dev)
	}
	return 0, 0, 0
}

package sandbox

import (
	"io/fs"
	"syscall"
)

// statIDs are what identifies a file's version beyond its mode, size and
// modification time: the inode's change time (which no command can set)
// and the inode.
func statIDs(fi fs.FileInfo) (ctime int64, ino, dev uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Sec*1e9 + st.Ctim.Nsec, st.Ino, uint64(st.Dev)
	}
	return 0, 0, 0
}
